# ALBERT with tisa-train's position schemes, for `from_pretrained(dir, trust_remote_code=True)`.
#
# tisa-train's exporter writes this file into every model directory whose position scheme HF's
# ALBERT cannot express. It is assembled at export (src/model/hf_remote_code.cpp): this part, the
# scheme-independent model, followed by the Python fragment of every scheme in tisa-train's
# registry (src/model/position/<name>.py, each beside its C++ files), which registers its module
# class with register_scheme(). It reproduces tisa-train's forward (SPEC §2, §3): Hugging Face's
# ALBERT classes are reused for everything but
#   - the embeddings, whose learned table is optional (`position.absolute`) and to which a scheme
#     may add its own term before the LayerNorm (add_to_embeddings: sinusoidal),
#   - the attention, which calls the scheme's hooks (transform_qk: RoPE; add_to_logits after the
#     1/√d scaling and before the padding mask: TISA, Shaw, ALiBi, T5, KERPLE, FIRE;
#     add_to_output: Shaw's α·aV),
# plus the encoder loop, which hands each layer application its scheme module. The hooks and their
# order are those of src/model/position/relative_scheme.h. Every setting is read from config.json's
# tisa_train.position block, which tisa-train's exporter writes in full; parameter names are
# tisa-train's (albert.encoder.<scheme>.<n>.<name>, SPEC §3), everything else keeps HF's names.
import math

import torch
from torch import nn
from transformers import initialization as init
from transformers.modeling_outputs import BaseModelOutput
from transformers.models.albert.modeling_albert import (
    AlbertAttention,
    AlbertEmbeddings,
    AlbertForPreTraining,
    AlbertForSequenceClassification,
    AlbertLayerGroup,
    AlbertMLMHead,
    AlbertModel,
    AlbertPreTrainedModel,
    AlbertSOPHead,
    AlbertTransformer,
)

from .configuration_tisa_albert import TisaAlbertConfig

# Scheme name (tisa_train.position.relative) → module class, or None for a scheme without a module
# (`none`). Filled by the scheme fragments appended to this file.
SCHEMES = {}


def register_scheme(name: str, cls) -> None:
    if name in SCHEMES:
        raise ValueError(f"position scheme '{name}' is registered twice in this modelling file")
    SCHEMES[name] = cls


class SchemeSettings:
    """A scheme's section tisa_train.position.<name>; a missing key is an error naming it."""

    def __init__(self, position: dict, name: str):
        self.name = name
        self.values = position.get(name, {})

    def __getitem__(self, key: str):
        if key not in self.values:
            raise ValueError(
                f"config.json: tisa_train.position.{self.name}.{key} is missing; tisa-train writes every "
                f"setting of the scheme: re-export the model with `tisa-train` (e.g. `model export`)")
        return self.values[key]


def relative_offsets(length: int, device) -> torch.Tensor:
    """[L, L] int64 offsets j − i."""
    pos = torch.arange(length, device=device)
    return pos.unsqueeze(0) - pos.unsqueeze(1)


def toeplitz_from_offsets(f: torch.Tensor, length: int) -> torch.Tensor:
    """[H, L, L] m[h, i, j] = f[h, (j − i) + L − 1] of a per-offset table f [H, 2L−1]."""
    return f[:, relative_offsets(length, f.device) + (length - 1)]


class PositionScheme(nn.Module):
    """One module of a position scheme: the hooks of relative_scheme.h, each adding nothing."""

    def __init__(self, config: TisaAlbertConfig, settings: SchemeSettings):
        super().__init__()

    @staticmethod
    def legacy_sharing(settings: SchemeSettings):
        """The sharing that the scheme's legacy switches select (per_layer / per_module / model), or None."""
        return None

    def begin_forward(self, length: int) -> None:
        """Once per model forward, before any layer: batch-independent terms."""

    def add_to_embeddings(self, x: torch.Tensor) -> torch.Tensor:
        return x  # x [B, L, E] = word + token type (+ learned table), before the LayerNorm

    def transform_qk(self, query: torch.Tensor, key: torch.Tensor):
        return query, key  # [B, H, L, d] each, before q·kᵀ

    def add_to_logits(self, logits: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        return logits  # [B, H, L, L], already divided by √d; query [B, H, L, d] unscaled

    def add_to_output(self, context: torch.Tensor, probs: torch.Tensor) -> torch.Tensor:
        return context  # context [B, H, L, d] = probs·V

    def init_weights(self, config: TisaAlbertConfig) -> None:
        """Initialises the scheme's own parameters as tisa-train does (through transformers' init)."""


class BiasScheme(PositionScheme):
    """A scheme whose term is a batch-independent bias [H, L, L] on the logits: computed once per
    forward (the first layer that asks) and shared by the batch and the layers using this module."""

    _bias = None

    def bias(self, length: int, logits: torch.Tensor) -> torch.Tensor:
        """bias[h, i, j]: [H, L, L] (logits gives the device, and the dtype where the scheme has no parameters)."""
        raise NotImplementedError

    def begin_forward(self, length):
        self._bias = None

    def add_to_logits(self, logits, query):
        length = query.shape[2]
        if self._bias is None or self._bias.shape[-1] != length:
            self._bias = self.bias(length, logits)
        return logits + self._bias.unsqueeze(0).to(logits.dtype)


def _scheme_layout(config: TisaAlbertConfig):
    """(name, modules, index(layer, inner)) of the configured scheme, as model/position/registry.cpp
    builds them: no module for `none`, one for a scheme without parameters, else by sharing."""
    position = config.position()
    name = position.get("relative", "none")
    if name not in SCHEMES:
        raise ValueError(
            f"config.json: tisa_train.position.relative is '{name}', which this modelling file does not know "
            f"(known: {', '.join(SCHEMES)}); re-export the model with the tisa-train that trained it")
    cls = SCHEMES[name]
    if cls is None:
        return name, [], None
    settings = SchemeSettings(position, name)
    first = cls(config, settings)
    if not any(True for _ in first.parameters()):
        return name, [first], lambda i, j: 0  # nothing to share: one module serves every layer
    sharing = cls.legacy_sharing(settings) or position.get("sharing")
    inner, groups, layers = config.inner_group_num, config.num_hidden_groups, config.num_hidden_layers
    per_group = layers // groups
    if sharing == "per_module":
        # One module per attention module, reused wherever ALBERT reuses that module (HF relative_key).
        count, index = groups * inner, lambda i, j: (i // per_group) * inner + j
    elif sharing == "per_layer":
        count, index = layers * inner, lambda i, j: i * inner + j
    elif sharing == "model":
        count, index = 1, lambda i, j: 0
    else:
        raise ValueError(f"config.json: tisa_train.position.sharing is {sharing!r} "
                         f"(expected per_layer, per_module or model)")
    return name, [first] + [cls(config, settings) for _ in range(count - 1)], index


class TisaAlbertEmbeddings(AlbertEmbeddings):
    """ALBERT's embeddings: the learned position table only when `position.absolute` is set, then
    the scheme's embedding term (`scheme()` returns the first scheme module, or None)."""

    def __init__(self, config: TisaAlbertConfig, scheme):
        super().__init__(config)
        self.scheme = scheme
        if not config.position().get("absolute", True):
            del self.position_embeddings
            self.position_embeddings = None

    def forward(self, input_ids=None, token_type_ids=None, position_ids=None, inputs_embeds=None):
        if inputs_embeds is None:
            inputs_embeds = self.word_embeddings(input_ids)
        length = inputs_embeds.shape[1]
        if token_type_ids is None:
            token_type_ids = torch.zeros(inputs_embeds.shape[:-1], dtype=torch.long, device=inputs_embeds.device)
        embeddings = inputs_embeds + self.token_type_embeddings(token_type_ids)  # [B, L, E]
        if self.position_embeddings is not None:
            if position_ids is None:
                position_ids = torch.arange(length, device=inputs_embeds.device).unsqueeze(0)
            embeddings = embeddings + self.position_embeddings(position_ids)
        scheme = self.scheme()
        if scheme is not None:
            embeddings = scheme.add_to_embeddings(embeddings)
        return self.dropout(self.LayerNorm(embeddings))


class TisaAlbertAttention(AlbertAttention):
    """ALBERT attention (eager) with the scheme's hooks (relative_scheme.h, SPEC §2)."""

    def forward(self, hidden_states, attention_mask=None, position_scheme=None, **kwargs):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.attention_head_size)
        query = self.query(hidden_states).view(hidden_shape).transpose(1, 2)  # [B, H, L, d]
        key = self.key(hidden_states).view(hidden_shape).transpose(1, 2)      # [B, H, L, d]
        value = self.value(hidden_states).view(hidden_shape).transpose(1, 2)  # [B, H, L, d]

        if position_scheme is not None:
            query, key = position_scheme.transform_qk(query, key)
        logits = torch.matmul(query, key.transpose(2, 3)) * self.scaling     # [B, H, L, L]
        if position_scheme is not None:
            logits = position_scheme.add_to_logits(logits, query)
        if attention_mask is not None:
            if attention_mask.dtype == torch.bool:  # True = attend (sdpa-style masks)
                attention_mask = torch.zeros_like(attention_mask, dtype=logits.dtype).masked_fill(
                    ~attention_mask, torch.finfo(logits.dtype).min)
            logits = logits + attention_mask
        probs = nn.functional.softmax(logits, dim=-1)
        dropped = self.attention_dropout(probs)
        context = torch.matmul(dropped, value)                                # [B, H, L, d]
        if position_scheme is not None:
            context = position_scheme.add_to_output(context, dropped)
        context = context.transpose(1, 2).reshape(*input_shape, -1)          # [B, L, H·d]
        output = self.LayerNorm(hidden_states + self.output_dropout(self.dense(context)))
        return output, probs


class TisaAlbertLayerGroup(AlbertLayerGroup):
    def __init__(self, config: TisaAlbertConfig):
        super().__init__(config)
        for layer in self.albert_layers:
            layer.attention = TisaAlbertAttention(config)


class TisaAlbertTransformer(AlbertTransformer):
    """ALBERT's encoder loop; application (i, j) of the shared layers gets its scheme module,
    registered as `<scheme>.<n>` (e.g. albert.encoder.tisa.0.offsets)."""

    def __init__(self, config: TisaAlbertConfig):
        nn.Module.__init__(self)
        self.config = config
        self.embedding_hidden_mapping_in = nn.Linear(config.embedding_size, config.hidden_size)
        self.albert_layer_groups = nn.ModuleList(
            [TisaAlbertLayerGroup(config) for _ in range(config.num_hidden_groups)])
        self.scheme_name, modules, self.scheme_index = _scheme_layout(config)
        if modules:
            self.add_module(self.scheme_name, nn.ModuleList(modules))

    def scheme_modules(self):
        return list(getattr(self, self.scheme_name)) if self.scheme_index is not None else []

    def first_scheme(self):
        modules = self.scheme_modules()
        return modules[0] if modules else None

    def scheme_for(self, layer: int, inner: int):
        if self.scheme_index is None:
            return None
        return getattr(self, self.scheme_name)[self.scheme_index(layer, inner)]

    def forward(self, hidden_states, attention_mask=None, **kwargs):
        kwargs.pop("position_scheme", None)
        hidden_states = self.embedding_hidden_mapping_in(hidden_states)
        for module in self.scheme_modules():
            module.begin_forward(hidden_states.shape[1])
        per_group = self.config.num_hidden_layers // self.config.num_hidden_groups
        for i in range(self.config.num_hidden_layers):
            group = self.albert_layer_groups[i // per_group]  # SPEC §3: layer i uses group int(i / (L / groups))
            for j, layer in enumerate(group.albert_layers):
                hidden_states = layer(hidden_states, attention_mask, position_scheme=self.scheme_for(i, j), **kwargs)
        return BaseModelOutput(last_hidden_state=hidden_states)


class TisaAlbertPreTrainedModel(AlbertPreTrainedModel):
    config_class = TisaAlbertConfig
    config: TisaAlbertConfig
    # The scheme terms are written out in TisaAlbertAttention: always the eager path.
    _supports_flash_attn = False
    _supports_sdpa = False
    _supports_flex_attn = False
    _supports_attention_backend = False

    @torch.no_grad()
    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, PositionScheme):
            module.init_weights(self.config)


def _build_albert(model: nn.Module, config: TisaAlbertConfig, add_pooling_layer: bool = True) -> None:
    """AlbertModel's modules with ours swapped in (without building HF's first)."""
    model.config = config
    model.encoder = TisaAlbertTransformer(config)
    # A bound method, not the module: the scheme's parameters stay registered under the encoder only.
    model.embeddings = TisaAlbertEmbeddings(config, model.encoder.first_scheme)
    model.pooler = nn.Linear(config.hidden_size, config.hidden_size) if add_pooling_layer else None
    model.pooler_activation = nn.Tanh() if add_pooling_layer else None
    model.attn_implementation = config._attn_implementation


class TisaAlbertModel(TisaAlbertPreTrainedModel, AlbertModel):
    def __init__(self, config: TisaAlbertConfig, add_pooling_layer: bool = True):
        AlbertPreTrainedModel.__init__(self, config)
        _build_albert(self, config, add_pooling_layer)
        self.post_init()


class TisaAlbertForPreTraining(TisaAlbertPreTrainedModel, AlbertForPreTraining):
    def __init__(self, config: TisaAlbertConfig):
        AlbertPreTrainedModel.__init__(self, config)
        self.albert = TisaAlbertModel(config)
        self.predictions = AlbertMLMHead(config)
        self.sop_classifier = AlbertSOPHead(config)
        self.post_init()


class TisaAlbertForSequenceClassification(TisaAlbertPreTrainedModel, AlbertForSequenceClassification):
    def __init__(self, config: TisaAlbertConfig):
        AlbertPreTrainedModel.__init__(self, config)
        self.num_labels = config.num_labels
        self.config = config
        self.albert = TisaAlbertModel(config)
        self.dropout = nn.Dropout(config.classifier_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()


__all__ = ["TisaAlbertModel", "TisaAlbertForPreTraining", "TisaAlbertForSequenceClassification"]


# ---------------------------------------------------------------------------------- schemes
# The fragments of tisa-train's registered schemes follow (src/model/position/<name>.py).
