# ALBERT with tisa-train's position schemes, for `from_pretrained(dir, trust_remote_code=True)`.
#
# tisa-train's exporter writes this file (embedded in the binary from src/model/hf_remote/) into
# every model directory whose position scheme HF's ALBERT cannot express. It reproduces
# tisa-train's forward (SPEC §2, §3): Hugging Face's ALBERT classes are reused for everything but
#   - the embeddings, whose learned position table is optional (`position.absolute`), and
#   - the attention, which adds the relative scheme's terms (Shaw: q·aK / α·aV, TISA: f_h(j − i))
#     after the 1/√d scaling and before the padding mask,
# plus the encoder loop, which hands each layer application its scheme module. Parameter names are
# tisa-train's (SPEC §3): albert.encoder.tisa.<n>.{offsets,amplitudes,sharpness},
# albert.encoder.shaw.<n>.{keys,values}; everything else keeps HF's ALBERT names.
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

SHAW_DEFAULTS = {"max_distance": 16, "values": True, "per_layer": True, "per_attention_module": False}
TISA_DEFAULTS = {"kernels": 5, "per_layer": True, "init_offset_std": 5.0, "init_amplitude_mean": 0.1,
                 "init_amplitude_std": 0.01, "init_sharpness_mean": 0.1, "init_sharpness_std": 0.01}
KNOWN_RELATIVE = ("none", "shaw", "tisa")
# Schemes of tisa-train (src/model/position/) without a Python implementation here yet.
NATIVE_ONLY = ("rope", "alibi", "t5", "kerple_log", "fire", "sinusoidal")


def _settings(position: dict, name: str, defaults: dict) -> dict:
    out = dict(defaults)
    out.update(position.get(name, {}))
    return out


def _relative_offsets(length: int, device) -> torch.Tensor:
    """[L, L] int64 offsets j − i."""
    pos = torch.arange(length, device=device)
    return pos.unsqueeze(0) - pos.unsqueeze(1)


class ShawTables(nn.Module):
    """Shaw et al. (2018): tables [2k+1, d], row r ↔ offset r − k, shared by the heads of a layer."""

    def __init__(self, max_distance: int, head_size: int, values: bool):
        super().__init__()
        self.max_distance = max_distance
        self.keys = nn.Parameter(torch.zeros(2 * max_distance + 1, head_size))
        self.values = nn.Parameter(torch.zeros(2 * max_distance + 1, head_size)) if values else None

    def buckets(self, length: int, device) -> torch.Tensor:
        """[L, L] row of the table used by query i, key j: clip(j − i, k) + k."""
        k = self.max_distance
        return _relative_offsets(length, device).clamp(-k, k) + k

    def add_to_logits(self, logits: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        # e_ij += q_i·aK[clip(j − i)]/√d without an [L, L, d] tensor: q·aKᵀ is [B, H, L, 2k+1], then
        # gathered by offset.
        batch, heads, length, head_size = query.shape
        scores = torch.matmul(query, self.keys.t()) / math.sqrt(head_size)  # [B, H, L, 2k+1]
        index = self.buckets(length, query.device).expand(batch, heads, length, length)
        return logits + scores.gather(-1, index)

    def add_to_output(self, context: torch.Tensor, probs: torch.Tensor) -> torch.Tensor:
        # z_i += Σ_j α_ij aV[clip(j − i)]: sum α into 2k+1 offset buckets, then multiply by aV.
        if self.values is None:
            return context
        length = probs.shape[-1]
        index = self.buckets(length, probs.device).expand(probs.shape)
        summed = torch.zeros(*probs.shape[:-1], self.values.shape[0], dtype=probs.dtype, device=probs.device)
        summed = summed.scatter_add(-1, index, probs)  # [B, H, L, 2k+1]
        return context + torch.matmul(summed, self.values.to(probs.dtype))


class TisaBias(nn.Module):
    """TISA (Wennberg & Henter 2021): f_h(r) = Σ_s a_{s,h} exp(−|b_{s,h}| (r − c_{s,h})²), r = j − i."""

    def __init__(self, num_heads: int, kernels: int):
        super().__init__()
        self.offsets = nn.Parameter(torch.zeros(kernels, num_heads))     # c [S, H]
        self.amplitudes = nn.Parameter(torch.zeros(kernels, num_heads))  # a [S, H]
        self.sharpness = nn.Parameter(torch.zeros(kernels, num_heads))   # b [S, H]

    def bias(self, length: int) -> torch.Tensor:
        r = torch.arange(-(length - 1), length, dtype=self.offsets.dtype, device=self.offsets.device)  # [2L−1]
        diff = r.view(1, 1, -1) - self.offsets.unsqueeze(-1)                                          # [S, H, 2L−1]
        f = (self.amplitudes.unsqueeze(-1) * torch.exp(-self.sharpness.abs().unsqueeze(-1) * diff * diff)).sum(0)
        index = _relative_offsets(length, self.offsets.device) + (length - 1)                         # [L, L]
        return f[:, index]                                                                              # [H, L, L]

    def add_to_logits(self, logits: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        return logits + self.bias(query.shape[2]).unsqueeze(0).to(logits.dtype)

    def add_to_output(self, context: torch.Tensor, probs: torch.Tensor) -> torch.Tensor:
        return context


def _scheme_layout(config: TisaAlbertConfig):
    """(name, settings, module count, index(layer, inner)) of the configured relative scheme."""
    position = config.position()
    name = position.get("relative", "none")
    if name in NATIVE_ONLY:
        raise ValueError(
            f"config.json: tisa_train.position.relative is '{name}', a tisa-train scheme that this remote code "
            f"does not implement (it knows: {', '.join(KNOWN_RELATIVE)}); run the model with tisa-train "
            f"(`tisa-train model forward`, `eval`, `glue --init`) instead"
        )
    if name not in KNOWN_RELATIVE:
        raise ValueError(
            f"config.json: tisa_train.position.relative is '{name}', which this modelling file does not know "
            f"(known: {', '.join(KNOWN_RELATIVE)}); re-export the model with the tisa-train that trained it"
        )
    inner, groups, layers = config.inner_group_num, config.num_hidden_groups, config.num_hidden_layers
    per_group = layers // groups
    if name == "none":
        return name, {}, 0, None
    settings = _settings(position, name, SHAW_DEFAULTS if name == "shaw" else TISA_DEFAULTS)
    # position.sharing (per_layer, per_module, model); the legacy per_layer / per_attention_module
    # switches win when set (model/position/registry.cpp, effective_sharing).
    sharing = position.get("sharing", "per_layer")
    if name == "shaw" and settings["per_attention_module"]:
        sharing = "per_module"
    elif not settings["per_layer"]:
        sharing = "model"
    if sharing == "per_module":
        # One table per attention module, reused wherever ALBERT reuses that module (HF relative_key).
        return name, settings, groups * inner, lambda i, j: (i // per_group) * inner + j
    if sharing == "per_layer":
        return name, settings, layers * inner, lambda i, j: i * inner + j
    return name, settings, 1, lambda i, j: 0


class TisaAlbertEmbeddings(AlbertEmbeddings):
    """ALBERT's embeddings with the learned position table only when `position.absolute` is set."""

    def __init__(self, config: TisaAlbertConfig):
        super().__init__(config)
        if not config.position().get("absolute", True):
            del self.position_embeddings
            self.position_embeddings = None

    def forward(self, input_ids=None, token_type_ids=None, position_ids=None, inputs_embeds=None):
        if self.position_embeddings is not None:
            return super().forward(input_ids, token_type_ids, position_ids, inputs_embeds)
        if inputs_embeds is None:
            inputs_embeds = self.word_embeddings(input_ids)
        if token_type_ids is None:
            token_type_ids = torch.zeros(inputs_embeds.shape[:-1], dtype=torch.long, device=inputs_embeds.device)
        embeddings = inputs_embeds + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.LayerNorm(embeddings))


class TisaAlbertAttention(AlbertAttention):
    """ALBERT attention (eager) with the relative scheme's terms: after 1/√d, before the mask (SPEC §2)."""

    def forward(self, hidden_states, attention_mask=None, position_scheme=None, **kwargs):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.attention_head_size)
        query = self.query(hidden_states).view(hidden_shape).transpose(1, 2)  # [B, H, L, d]
        key = self.key(hidden_states).view(hidden_shape).transpose(1, 2)      # [B, H, L, d]
        value = self.value(hidden_states).view(hidden_shape).transpose(1, 2)  # [B, H, L, d]

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
    """ALBERT's encoder loop; application (i, j) of the shared layers gets its scheme module."""

    def __init__(self, config: TisaAlbertConfig):
        nn.Module.__init__(self)
        self.config = config
        self.embedding_hidden_mapping_in = nn.Linear(config.embedding_size, config.hidden_size)
        self.albert_layer_groups = nn.ModuleList(
            [TisaAlbertLayerGroup(config) for _ in range(config.num_hidden_groups)])
        name, settings, count, self.scheme_index = _scheme_layout(config)
        self.scheme_name = name
        head_size = config.hidden_size // config.num_attention_heads
        if name == "shaw":
            self.shaw = nn.ModuleList([ShawTables(settings["max_distance"], head_size, settings["values"])
                                       for _ in range(count)])
        elif name == "tisa":
            self.tisa = nn.ModuleList([TisaBias(config.num_attention_heads, settings["kernels"])
                                       for _ in range(count)])

    def scheme_for(self, layer: int, inner: int):
        if self.scheme_index is None:
            return None
        return getattr(self, self.scheme_name)[self.scheme_index(layer, inner)]

    def forward(self, hidden_states, attention_mask=None, **kwargs):
        kwargs.pop("position_scheme", None)
        hidden_states = self.embedding_hidden_mapping_in(hidden_states)
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
        std = self.config.initializer_range
        if isinstance(module, ShawTables):
            init.normal_(module.keys, mean=0.0, std=std)
            if module.values is not None:
                init.normal_(module.values, mean=0.0, std=std)
        elif isinstance(module, TisaBias):
            t = _settings(self.config.position(), "tisa", TISA_DEFAULTS)
            init.normal_(module.offsets, mean=0.0, std=t["init_offset_std"])
            init.normal_(module.amplitudes, mean=t["init_amplitude_mean"], std=t["init_amplitude_std"])
            init.normal_(module.sharpness, mean=t["init_sharpness_mean"], std=t["init_sharpness_std"])


def _build_albert(model: nn.Module, config: TisaAlbertConfig, add_pooling_layer: bool = True) -> None:
    """AlbertModel's modules with ours swapped in (without building HF's first)."""
    model.config = config
    model.embeddings = TisaAlbertEmbeddings(config)
    model.encoder = TisaAlbertTransformer(config)
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
