# ALiBi (Press et al. 2022) in the Hugging Face remote code (see alibi.h), symmetric encoder form:
# bias[h, i, j] = −m_h |j − i| with the authors' get_slopes(H); fixed, no parameters. Computed in
# float32 (float64 for float64 logits), as the C++.
def alibi_slopes(heads: int) -> list:
    def power_of_2(n):
        start = 2.0 ** (-(2.0 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]

    log = math.log2(heads)
    if log == math.floor(log):
        return power_of_2(heads)
    closest = 2 ** math.floor(log)
    return power_of_2(closest) + alibi_slopes(2 * closest)[0::2][: heads - closest]


class AlibiScheme(BiasScheme):
    def __init__(self, config, settings):
        super().__init__(config, settings)
        self.slopes = alibi_slopes(config.num_attention_heads)

    def bias(self, length, logits):
        options = dict(dtype=torch.float64 if logits.dtype == torch.float64 else torch.float32, device=logits.device)
        m = torch.tensor(self.slopes, dtype=torch.float64).to(**options)  # [H]
        pos = torch.arange(length, **options)
        distance = (pos.unsqueeze(0) - pos.unsqueeze(1)).abs()            # [L, L]: |j − i|
        return -m.view(-1, 1, 1) * distance.unsqueeze(0)                  # [H, L, L]


register_scheme("alibi", AlibiScheme)
