# Configuration of tisa-train ALBERT models whose position scheme Hugging Face's ALBERT cannot
# express (every scheme of src/model/position/ but the learned absolute table alone).
#
# Written next to config.json by tisa-train's exporter (src/model/hf_remote/, embedded in the
# binary) and loaded by `from_pretrained(dir, trust_remote_code=True)`. The position settings live
# in the `tisa_train` block exactly as tisa-train writes them (SPEC §4), so a directory saved back
# by `save_pretrained` still imports into tisa-train.
from transformers import AlbertConfig


class TisaAlbertConfig(AlbertConfig):
    # Not "albert": a plain AlbertConfig/AlbertForPreTraining load then warns about the type, and
    # AutoModel* refuses the directory unless trust_remote_code=True picks up this code.
    model_type = "tisa_albert"

    # {"position": {"absolute": bool, "relative": <scheme>, "sharing": ..., <scheme>: {its settings}, ...}}
    tisa_train: dict | None = None

    def position(self) -> dict:
        """The `tisa_train.position` block; an error naming the key when it is absent."""
        block = self.tisa_train or {}
        if "position" not in block:
            raise ValueError(
                "config.json: model_type tisa_albert needs the tisa_train.position block "
                "(written by tisa-train's exporter); it is missing"
            )
        return block["position"]


__all__ = ["TisaAlbertConfig"]
