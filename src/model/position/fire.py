# FIRE (Li et al. 2023) in the Hugging Face remote code (see fire.h): bias[h, i, j] = f_θ(x_ij)_h,
#   x_ij = sign(j − i)·ψ(|j − i|)/ψ(max(T, i)),   ψ(x) = log(c·x + 1),
# f_θ = mlp_out(relu(mlp_in(x))), c and `threshold` T learned, used as |c| ≥ 1e-6 and |T| ≥ 1.
# While T ≥ L − 1 the bias depends on j − i only and the MLP runs on the 2L−1 offsets, as the C++.
class FireScheme(BiasScheme):
    def __init__(self, config, settings):
        super().__init__(config, settings)
        self.settings = settings
        self.mlp_in = nn.Linear(1, settings["hidden_size"])
        self.mlp_out = nn.Linear(settings["hidden_size"], config.num_attention_heads)
        self.c = nn.Parameter(torch.zeros(1))
        self.threshold = nn.Parameter(torch.zeros(1))

    def mlp(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp_out(torch.relu(self.mlp_in(x.unsqueeze(-1))))  # [..., H]

    def bias(self, length, logits):
        c = self.c.abs().clamp_min(1e-6)                  # [1]
        threshold = self.threshold.abs().clamp_min(1.0)   # [1]
        if threshold.item() >= length - 1:
            r = torch.arange(-(length - 1), length, dtype=c.dtype, device=c.device)  # [2L−1]
            x = torch.sign(r) * torch.log1p(c * r.abs()) / torch.log1p(c * threshold)
            return toeplitz_from_offsets(self.mlp(x).t(), length)                    # [H, L, L]
        pos = torch.arange(length, dtype=c.dtype, device=c.device)                    # [L]
        rel = pos.unsqueeze(0) - pos.unsqueeze(1)                                     # [L, L]: j − i
        norm = torch.log1p(c * torch.maximum(pos, threshold))                         # [L]: ψ(max(T, i))
        x = torch.sign(rel) * torch.log1p(c * rel.abs()) / norm.unsqueeze(1)          # [L, L]
        return self.mlp(x).permute(2, 0, 1)                                           # [H, L, L]

    def init_weights(self, config):
        # mlp_in / mlp_out are nn.Linear: ALBERT's _init_weights initialises them.
        init.constant_(self.c, self.settings["init_c"])
        init.constant_(self.threshold, self.settings["init_threshold"])


register_scheme("fire", FireScheme)
