# tisa-train's SentencePiece (ALBERT) tokenizer for `AutoTokenizer.from_pretrained(dir,
# trust_remote_code=True)`: the ids `tisa-train tokenizer encode` gives (SPEC §6).
#
# Written next to spiece.model by tisa-train (src/text/hf_remote/, compiled into tisa-text).
# transformers 5's own AlbertTokenizer is built on the `tokenizers` library and departs from
# ALBERT's reference tokenisation in two places: it has no digit-comma rule ("80,000,") and it
# splits SentencePiece's user-defined symbols out before the model, dropping the "▁" in front of
# them (" ." becomes "." instead of "▁", "."). This class runs SentencePiece itself, as ALBERT did:
#   text → collapse whitespace → `` and '' to " → NFKD and drop combining marks (unless
#   keep_accents) → lowercase (if do_lower_case) → SentencePiece pieces → digit-comma rule: a piece
#   of two or more characters ending in "<digit>," is encoded again without the comma (and without
#   "▁"; a leading "▁" of the result is dropped when the piece had none) and the comma follows alone.
# Model inputs are [CLS] A [SEP] (B [SEP]), token types 0 for [CLS] A [SEP] and 1 for B [SEP].
import unicodedata

from transformers.tokenization_utils_sentencepiece import SentencePieceBackend

META = "\u2581"


class TisaAlbertTokenizer(SentencePieceBackend):
    vocab_files_names = {"vocab_file": "spiece.model"}
    model_input_names = ["input_ids", "token_type_ids", "attention_mask"]
    is_fast = False

    def __init__(self, vocab_file, do_lower_case=True, keep_accents=False, remove_space=True, bos_token="[CLS]",
                 eos_token="[SEP]", unk_token="<unk>", sep_token="[SEP]", pad_token="<pad>", cls_token="[CLS]",
                 mask_token="[MASK]", **kwargs):
        self.do_lower_case = do_lower_case
        self.keep_accents = keep_accents
        self.remove_space = remove_space
        kwargs.setdefault("special_tokens_pattern", "cls_sep")
        super().__init__(vocab_file=vocab_file, do_lower_case=do_lower_case, keep_accents=keep_accents,
                         remove_space=remove_space, bos_token=bos_token, eos_token=eos_token, unk_token=unk_token,
                         sep_token=sep_token, pad_token=pad_token, cls_token=cls_token, mask_token=mask_token,
                         **kwargs)

    def normalize(self, text: str) -> str:
        if self.remove_space:
            text = " ".join(text.split())
        text = text.replace("``", '"').replace("''", '"')
        if not self.keep_accents:
            text = "".join(c for c in unicodedata.normalize("NFKD", text) if unicodedata.combining(c) == 0)
        return text.lower() if self.do_lower_case else text

    def _tokenize(self, text, **kwargs):
        pieces = []
        for piece in self.sp_model.encode(self.normalize(text), out_type=str):
            if len(piece) < 2 or piece[-1] != "," or not piece[-2].isdigit():
                pieces.append(piece)
                continue
            again = self.sp_model.encode(piece[:-1].replace(META, ""), out_type=str)
            if not piece.startswith(META) and again and again[0].startswith(META):
                again = again[1:] if again[0] == META else [again[0][1:]] + again[1:]
            pieces.extend(again)
            pieces.append(",")
        return pieces

    def create_token_type_ids_from_sequences(self, token_ids_0, token_ids_1=None):
        first = [0] * (len(token_ids_0) + 2)
        return first if token_ids_1 is None else first + [1] * (len(token_ids_1) + 1)


__all__ = ["TisaAlbertTokenizer"]
