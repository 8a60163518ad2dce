# KERPLE-log (Chi et al. 2022) in the Hugging Face remote code (see kerple_log.h), symmetric form:
# bias[h, i, j] = −r1_h log(1 + r2_h |j − i|), `r1`, `r2` [H] clamped to ≥ 1e-2 in the forward.
class KerpleLogScheme(BiasScheme):
    min_parameter = 1e-2  # kerple_log.cpp's kMinParameter (the official code's eps)

    def __init__(self, config, settings):
        super().__init__(config, settings)
        self.settings = settings
        self.r1 = nn.Parameter(torch.zeros(config.num_attention_heads))
        self.r2 = nn.Parameter(torch.zeros(config.num_attention_heads))

    def bias(self, length, logits):
        r = torch.arange(-(length - 1), length, dtype=self.r1.dtype, device=self.r1.device).abs()  # [2L−1]
        r1 = self.r1.clamp_min(self.min_parameter).unsqueeze(1)
        r2 = self.r2.clamp_min(self.min_parameter).unsqueeze(1)
        return toeplitz_from_offsets(-r1 * torch.log1p(r2 * r.unsqueeze(0)), length)  # [H, L, L]

    def init_weights(self, config):
        init.uniform_(self.r1, 0.0, self.settings["init_r1_max"])
        init.uniform_(self.r2, 0.0, self.settings["init_r2_max"])


register_scheme("kerple_log", KerpleLogScheme)
