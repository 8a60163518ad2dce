# ALiBi with trainable slopes in the Hugging Face remote code (see learned_alibi.h):
# bias[h, i, j] = −exp(s_h) |j − i|, `log_slopes` [H] starting at the log of ALiBi's slopes.
class LearnedAlibiScheme(BiasScheme):
    def __init__(self, config, settings):
        super().__init__(config, settings)
        self.heads = config.num_attention_heads
        self.log_slopes = nn.Parameter(torch.zeros(self.heads))

    def bias(self, length, logits):
        r = torch.arange(-(length - 1), length, dtype=self.log_slopes.dtype, device=self.log_slopes.device).abs()
        scores = -self.log_slopes.exp().unsqueeze(1) * r.unsqueeze(0)  # [H, 2L−1]
        return toeplitz_from_offsets(scores, length)                   # [H, L, L]

    def init_weights(self, config):
        with torch.no_grad():
            slopes = torch.tensor(alibi_slopes(self.heads), dtype=torch.float64)
            self.log_slopes.copy_(slopes.log().to(self.log_slopes.dtype))


register_scheme("learned_alibi", LearnedAlibiScheme)
