# TISA (Wennberg & Henter 2021) in the Hugging Face remote code (see tisa.h): a per-head bias
#   f_h(r) = Σ_s a_{s,h} exp(−|b_{s,h}| (r − c_{s,h})²),   r = j − i,
# with `offsets` c, `amplitudes` a, `sharpness` b, each [S, H].
class TisaScheme(BiasScheme):
    def __init__(self, config, settings):
        super().__init__(config, settings)
        self.settings = settings
        shape = (settings["kernels"], config.num_attention_heads)
        self.offsets = nn.Parameter(torch.zeros(shape))     # c [S, H]
        self.amplitudes = nn.Parameter(torch.zeros(shape))  # a [S, H]
        self.sharpness = nn.Parameter(torch.zeros(shape))   # b [S, H]

    @staticmethod
    def legacy_sharing(settings):
        return None if settings["per_layer"] else "model"  # TisaSettings::legacy_sharing

    def bias(self, length, logits):
        r = torch.arange(-(length - 1), length, dtype=self.offsets.dtype, device=self.offsets.device)  # [2L−1]
        diff = r.view(1, 1, -1) - self.offsets.unsqueeze(-1)                                           # [S, H, 2L−1]
        f = (self.amplitudes.unsqueeze(-1) * torch.exp(-self.sharpness.abs().unsqueeze(-1) * diff * diff)).sum(0)
        return toeplitz_from_offsets(f, length)                                                        # [H, L, L]

    def init_weights(self, config):
        s = self.settings
        init.normal_(self.offsets, mean=0.0, std=s["init_offset_std"])
        init.normal_(self.amplitudes, mean=s["init_amplitude_mean"], std=s["init_amplitude_std"])
        init.normal_(self.sharpness, mean=s["init_sharpness_mean"], std=s["init_sharpness_std"])


register_scheme("tisa", TisaScheme)
