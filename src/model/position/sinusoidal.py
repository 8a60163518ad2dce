# Fixed sinusoidal positions (Vaswani et al. 2017) in the Hugging Face remote code (see
# sinusoidal.h): x ↦ x·embedding_factor + table_factor·PE before the embedding LayerNorm, with
# PE[p, 2i] = sin(p/10000^(2i/E)), PE[p, 2i+1] = cos(…), evaluated in float64; no parameters.
def sinusoidal_table(length: int, size: int) -> torch.Tensor:
    f64 = dict(dtype=torch.float64)
    pos = torch.arange(length, **f64).unsqueeze(1)                  # [L, 1]
    i2 = torch.arange(0, size, 2, **f64)                            # [⌈E/2⌉]: 2i
    angles = pos * torch.pow(10000.0, -i2 / size)                   # [L, ⌈E/2⌉]
    pe = torch.zeros(length, size, **f64)
    pe[:, 0::2] = angles.sin()
    pe[:, 1::2] = angles.cos()[:, : size // 2]
    return pe                                                       # [L, E]


class SinusoidalScheme(PositionScheme):
    def __init__(self, config, settings):
        super().__init__(config, settings)
        self.embedding_size = config.embedding_size
        scale = settings["scale"]
        # make_sinusoidal_scheme: (table factor, embedding factor) of each scale.
        factors = {"init": (config.initializer_range * math.sqrt(2.0), 1.0),
                   "sqrt_e": (1.0, math.sqrt(config.embedding_size)),
                   "unit": (1.0, 1.0)}
        if scale not in factors:
            raise ValueError(f"config.json: tisa_train.position.sinusoidal.scale is {scale!r} "
                             f"(expected {', '.join(factors)})")
        self.table_factor, self.embedding_factor = factors[scale]

    def add_to_embeddings(self, x):
        table = (sinusoidal_table(x.shape[1], self.embedding_size) * self.table_factor).to(x.device, x.dtype)
        if self.embedding_factor != 1.0:
            x = x * self.embedding_factor
        return x + table  # [B, L, E]


register_scheme("sinusoidal", SinusoidalScheme)
