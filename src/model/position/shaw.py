# Shaw et al. (2018) in the Hugging Face remote code (see shaw.h): tables `keys`, `values`
# [2k+1, d], row r ↔ offset r − k, shared by the heads of a layer;
#   e_ij += q_i·aK[clip(j − i, k)]/√d,   z_i += Σ_j α_ij aV[clip(j − i, k)].
# Only shaw.h's gather form: the skew form gives the same values for long clips.
class ShawScheme(PositionScheme):
    def __init__(self, config, settings):
        super().__init__(config, settings)
        head_size = config.hidden_size // config.num_attention_heads
        self.max_distance = settings["max_distance"]
        rows = 2 * self.max_distance + 1
        self.keys = nn.Parameter(torch.zeros(rows, head_size))
        self.values = nn.Parameter(torch.zeros(rows, head_size)) if settings["values"] else None

    @staticmethod
    def legacy_sharing(settings):
        # ShawSettings::legacy_sharing: per_attention_module wins, then per_layer: false.
        if settings["per_attention_module"]:
            return "per_module"
        return None if settings["per_layer"] else "model"

    def buckets(self, length: int, device) -> torch.Tensor:
        """[L, L] row of the table used by query i, key j: clip(j − i, k) + k."""
        k = self.max_distance
        return relative_offsets(length, device).clamp(-k, k) + k

    def add_to_logits(self, logits, query):
        # q·aKᵀ is [B, H, L, 2k+1], then gathered by offset: no [L, L, d] tensor.
        batch, heads, length, head_size = query.shape
        scores = torch.matmul(query, self.keys.t()) / math.sqrt(head_size)  # [B, H, L, 2k+1]
        index = self.buckets(length, query.device).expand(batch, heads, length, length)
        return logits + scores.gather(-1, index)

    def add_to_output(self, context, probs):
        # Sum α into 2k+1 offset buckets, then multiply by aV.
        if self.values is None:
            return context
        index = self.buckets(probs.shape[-1], probs.device).expand(probs.shape)
        summed = torch.zeros(*probs.shape[:-1], self.values.shape[0], dtype=probs.dtype, device=probs.device)
        summed = summed.scatter_add(-1, index, probs)  # [B, H, L, 2k+1]
        return context + torch.matmul(summed, self.values.to(probs.dtype))

    def init_weights(self, config):
        init.normal_(self.keys, mean=0.0, std=config.initializer_range)
        if self.values is not None:
            init.normal_(self.values, mean=0.0, std=config.initializer_range)


register_scheme("shaw", ShawScheme)
