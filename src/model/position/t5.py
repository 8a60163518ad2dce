# T5's relative attention bias (Raffel et al. 2020) in the Hugging Face remote code (see t5.h),
# bidirectional: bias[h, i, j] = table[bucket(j − i), h], `table` [num_buckets, H]; the buckets of
# transformers' T5Attention._relative_position_bucket(bidirectional=True), in float32 as T5.
def t5_relative_bucket(relative: torch.Tensor, num_buckets: int, max_distance: int) -> torch.Tensor:
    side = num_buckets // 2                                   # buckets per direction
    buckets = (relative > 0).to(torch.long) * side            # j > i: upper half
    n = relative.abs()
    max_exact = side // 2
    large = (torch.log(n.float() / max_exact) / math.log(max_distance / max_exact) * (side - max_exact)).to(
        torch.long) + max_exact
    large = torch.clamp_max(large, side - 1)
    return buckets + torch.where(n < max_exact, n, large)


class T5Scheme(BiasScheme):
    def __init__(self, config, settings):
        super().__init__(config, settings)
        self.num_buckets = settings["num_buckets"]
        self.max_distance = settings["max_distance"]
        self.table = nn.Parameter(torch.zeros(self.num_buckets, config.num_attention_heads))  # [buckets, H]

    def bias(self, length, logits):
        index = t5_relative_bucket(relative_offsets(length, self.table.device), self.num_buckets, self.max_distance)
        return self.table[index].permute(2, 0, 1)  # [H, L, L]

    def init_weights(self, config):
        init.normal_(self.table, mean=0.0, std=config.initializer_range)


register_scheme("t5", T5Scheme)
