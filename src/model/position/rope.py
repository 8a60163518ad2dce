# RoPE (Su et al. 2021) in the Hugging Face remote code (see rope.h), rotate-half convention: q and
# k rows at position m become x·cos(mθ) + rotate_half(x)·sin(mθ), θ_i = base^(−2i/d) duplicated over
# both halves; cos/sin evaluated in float64 and cast to q's dtype. No parameters.
class RopeScheme(PositionScheme):
    def __init__(self, config, settings):
        super().__init__(config, settings)
        self.head_size = config.hidden_size // config.num_attention_heads
        if self.head_size % 2:
            raise ValueError(f"config.json: rope needs an even head size, got {self.head_size}")
        self.base = float(settings["base"])

    def rotate(self, x: torch.Tensor) -> torch.Tensor:
        length, half = x.shape[-2], self.head_size // 2
        f64 = dict(dtype=torch.float64, device=x.device)
        inv_freq = torch.pow(self.base, -torch.arange(0, self.head_size, 2, **f64) / self.head_size)  # [d/2]
        angles = torch.outer(torch.arange(length, **f64), inv_freq)                                  # [L, d/2]
        emb = torch.cat([angles, angles], -1)                                                        # [L, d]
        rotated = torch.cat([-x[..., half:], x[..., :half]], -1)                                      # [..., L, d]
        return x * emb.cos().to(x.dtype) + rotated * emb.sin().to(x.dtype)

    def transform_qk(self, query, key):
        return self.rotate(query), self.rotate(key)


register_scheme("rope", RopeScheme)
