"""normalize="tokens": exact against a full-batch token mean computed by hand, on several
sequence models and padding patterns; per-sample norms stay exact, BatchNorm does not."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from gradacc_lessons.accumulate import accumulated_gradients, count_tokens, split_batch, token_loss
from gradacc_lessons.data import make_lengths, make_sequences
from gradacc_lessons.demos.token_pitfalls import compute_token_errors, token_errors_for_lengths
from gradacc_lessons.models import TinySequenceModel

VOCAB, B, T = 11, 12, 9


class CausalTransformer(nn.Module):
    """One pre-norm transformer layer with causal attention: logits (batch, length, vocab)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.position = nn.Parameter(0.1 * torch.randn(T, 16))
        self.layer = nn.TransformerEncoderLayer(
            16, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True, norm_first=True
        )
        self.head = nn.Linear(16, VOCAB)

    def forward(self, tokens):
        length = tokens.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(length, dtype=self.position.dtype)
        h = self.embed(tokens) + self.position[:length]
        return self.head(self.layer(h, src_mask=mask, is_causal=True))


class ConvTagger(nn.Module):
    """Embedding -> Conv1d -> norm -> ReLU -> 1x1 Conv1d; norm over (channels, positions)."""

    def __init__(self, norm: str):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 8)
        self.conv = nn.Conv1d(8, 8, 3, padding=1)
        self.norm = {
            "group": lambda: nn.GroupNorm(4, 8),
            "layer": lambda: nn.GroupNorm(1, 8),  # LayerNorm over (C, T) of each sample
            "batch": lambda: nn.BatchNorm1d(8),
        }[norm]()
        self.out = nn.Conv1d(8, VOCAB, 1)

    def forward(self, tokens):
        h = self.conv(self.embed(tokens).transpose(1, 2))
        return self.out(F.relu(self.norm(h))).transpose(1, 2)


def channels_loss(logits, targets):
    """Cross-entropy in PyTorch's (batch, classes, positions) layout, default ignore_index."""
    return F.cross_entropy(logits.transpose(1, 2), targets)


def padded(pattern: str, seed: int = 0, ignore_index: int = -100):
    """Tokens and targets with one of several padding / masking patterns."""
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(1, VOCAB, (B, T), generator=g)
    targets = torch.randint(0, VOCAB, (B, T), generator=g)
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    positions = torch.arange(T)
    if pattern == "right":
        keep = positions < lengths[:, None]
    elif pattern == "left":
        keep = positions >= (T - lengths)[:, None]
    elif pattern == "prompt":  # the first tokens of each sequence are a prompt, not trained on
        keep = positions >= (lengths - 1)[:, None]
    elif pattern == "holes":
        keep = torch.rand(B, T, generator=g) < 0.3
        keep[:, 0] = True
    elif pattern == "empty_first":  # the first micro-batch (first 3 rows) is padding only
        keep = positions < lengths[:, None]
        keep[:3] = False
    elif pattern == "sorted":
        keep = positions < lengths.sort().values[:, None]
    else:
        raise AssertionError(pattern)
    targets = torch.where(keep, targets, torch.full_like(targets, ignore_index))
    return torch.where(keep, tokens, torch.zeros_like(tokens)), targets


def hand_token_mean_gradients(model, tokens, targets, ignore_index=-100):
    """The full batch's token-mean gradient by hand: per-token losses, masked, summed, divided."""
    logits = model(tokens)
    keep = targets != ignore_index
    safe = torch.where(keep, targets, torch.zeros_like(targets))
    per_token = -logits.log_softmax(-1).gather(-1, safe[..., None]).squeeze(-1)
    loss = (per_token * keep).sum() / keep.sum()
    names, params = zip(*[(n, p) for n, p in model.named_parameters()])
    grads = torch.autograd.grad(loss, params, allow_unused=True)
    return {n: torch.zeros_like(p) if g is None else g for n, p, g in zip(names, params, grads)}


def assert_float64_match(reference, got, label):
    for name in reference:
        torch.testing.assert_close(
            got[name], reference[name], rtol=1e-10, atol=1e-12, msg=f"{label}: {name}"
        )


def relative_l2(reference, got):
    diff = sum(float(((got[n] - reference[n]) ** 2).sum()) for n in reference)
    return (diff / sum(float((reference[n] ** 2).sum()) for n in reference)) ** 0.5


MODELS = {
    "gru": lambda: TinySequenceModel(VOCAB),
    "transformer": CausalTransformer,
    "conv_group": lambda: ConvTagger("group"),
    "conv_layer": lambda: ConvTagger("layer"),
}
PATTERNS = ["right", "left", "prompt", "holes", "empty_first", "sorted"]
SPLITS = [2, 4, [3, 5, 4], [1, 2, 9], 12]


@pytest.mark.parametrize("model_name", MODELS)
@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("split", SPLITS, ids=str)
def test_tokens_match_the_full_batch_token_mean_in_float64(model_name, pattern, split):
    torch.manual_seed(1)
    model = MODELS[model_name]().double()
    tokens, targets = padded(pattern)
    if pattern == "empty_first" and isinstance(split, int) and split != 4:
        split = [3, 4, 5]  # keep a micro-batch that holds padding only
    reference = hand_token_mean_gradients(model, tokens, targets)
    for loss_fn in (token_loss, channels_loss):
        how = {"sizes": split} if isinstance(split, list) else {"accumulation_steps": split}
        got = accumulated_gradients(model, loss_fn, tokens, targets, **how, normalize="tokens")
        assert_float64_match(reference, got, f"{model_name}/{pattern}/{split}")


@pytest.mark.parametrize("model_name", ["gru", "transformer"])
def test_tokens_match_in_float32_within_the_measured_tolerance(model_name):
    torch.manual_seed(2)
    model = MODELS[model_name]()
    tokens, targets = padded("right", seed=3)
    reference = hand_token_mean_gradients(model, tokens, targets)
    got = accumulated_gradients(
        model, token_loss, tokens, targets, sizes=[2, 7, 3], normalize="tokens"
    )
    for name, g in reference.items():
        # float32: max|Δ| <= 1e-4 * max|g| passed 1,500 correct cases and fails every wrong recipe
        assert (got[name] - g).abs().max() <= 1e-4 * g.abs().max(), name


@pytest.mark.parametrize("pattern", ["right", "sorted", "prompt"])
def test_naive_per_micro_batch_token_mean_deviates(pattern):
    torch.manual_seed(3)
    model = TinySequenceModel(VOCAB).double()
    tokens, targets = padded(pattern, seed=4)
    counts = [count_tokens(y) for _, y in split_batch(tokens, targets, 4)]
    assert len(set(counts)) > 1, counts  # otherwise the bug is invisible
    reference = hand_token_mean_gradients(model, tokens, targets)
    naive = accumulated_gradients(model, token_loss, tokens, targets, 4, normalize="naive")
    assert relative_l2(reference, naive) > 1e-2


def test_samples_weighting_is_also_wrong_for_token_means():
    torch.manual_seed(4)
    model = TinySequenceModel(VOCAB).double()
    tokens, targets = padded("sorted", seed=5)
    reference = hand_token_mean_gradients(model, tokens, targets)
    by_samples = accumulated_gradients(model, token_loss, tokens, targets, 3, normalize="samples")
    assert relative_l2(reference, by_samples) > 1e-2


def test_custom_ignore_index():
    torch.manual_seed(5)
    model = TinySequenceModel(VOCAB).double()
    tokens, targets = padded("holes", seed=6, ignore_index=-1)
    reference = hand_token_mean_gradients(model, tokens, targets, ignore_index=-1)

    def loss_fn(logits, y):
        return F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=-1)

    got = accumulated_gradients(
        model, loss_fn, tokens, targets, sizes=[5, 7], normalize="tokens", ignore_index=-1
    )
    assert_float64_match(reference, got, "ignore_index=-1")


@pytest.mark.parametrize("norm", ["group", "layer"])
def test_per_sample_norms_match_and_batchnorm_does_not(norm):
    tokens, targets = padded("right", seed=7)
    torch.manual_seed(6)
    exact = ConvTagger(norm).double()
    reference = hand_token_mean_gradients(exact, tokens, targets)
    got = accumulated_gradients(exact, token_loss, tokens, targets, 4, normalize="tokens")
    assert_float64_match(reference, got, norm)

    torch.manual_seed(6)
    batchnorm = ConvTagger("batch").double()
    reference = hand_token_mean_gradients(batchnorm, tokens, targets)
    reference.pop("conv.bias")  # feeds BatchNorm: its gradient is zero, noise over noise
    got = accumulated_gradients(batchnorm, token_loss, tokens, targets, 4, normalize="tokens")
    assert relative_l2(reference, got) > 1e-2


def test_sum_reduced_loss_needs_no_weight():
    torch.manual_seed(7)
    model = TinySequenceModel(VOCAB).double()
    tokens, targets = padded("right", seed=8)

    def sum_loss(logits, y):
        return F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum")

    mean = hand_token_mean_gradients(model, tokens, targets)
    n = int((targets != -100).sum())
    got = accumulated_gradients(model, sum_loss, tokens, targets, sizes=[4, 3, 5], normalize="sum")
    assert_float64_match({k: v * n for k, v in mean.items()}, got, "sum")


def test_float64_stays_float64():
    # An int-tensor ratio n_tokens / total is float32 and limits agreement to ~3e-8.
    torch.manual_seed(8)
    model = TinySequenceModel(VOCAB).double()
    tokens, targets = padded("holes", seed=9)
    got = accumulated_gradients(model, token_loss, tokens, targets, 3, normalize="tokens")
    assert all(g.dtype == torch.float64 for g in got.values())


def test_model_grads_are_restored():
    model = TinySequenceModel(VOCAB)
    tokens, targets = padded("right")
    marker = torch.full_like(model.head.bias, 7.0)
    model.head.bias.grad = marker
    accumulated_gradients(model, token_loss, tokens, targets, 3, normalize="tokens")
    assert model.head.bias.grad is marker and model.embed.weight.grad is None


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"normalize": "token"}, "normalize must be one of"),
        ({"normalize": "tokens", "ignore_index": "pad"}, "ignore_index must be an integer"),
        ({"normalize": "tokens", "ignore_index": 1.5}, "ignore_index must be an integer"),
    ],
)
def test_bad_arguments_raise_clear_errors(kwargs, words):
    tokens, targets = padded("right")
    with pytest.raises(ValueError, match=words):
        accumulated_gradients(TinySequenceModel(VOCAB), token_loss, tokens, targets, 2, **kwargs)


def test_float_targets_and_all_padding_raise():
    model = nn.Linear(3, 1)
    with pytest.raises(ValueError, match="integer class targets"):
        accumulated_gradients(
            model, F.mse_loss, torch.ones(4, 3), torch.ones(4, 1), 2, normalize="tokens"
        )
    tokens, targets = padded("right")
    with pytest.raises(ValueError, match="every target equals ignore_index=-100"):
        accumulated_gradients(
            TinySequenceModel(VOCAB), token_loss, tokens, torch.full_like(targets, -100), 2,
            normalize="tokens",
        )  # fmt: skip


@pytest.mark.parametrize("sizes", [[3, 3], [0, 12], [5, 8], [6.0, 6]], ids=str)
def test_bad_sizes_raise(sizes):
    x, y = torch.zeros(12, 2), torch.zeros(12)
    with pytest.raises(ValueError, match="sizes.*12"):  # names the argument and the batch size
        split_batch(x, y, sizes=sizes)


def test_generated_sequences_are_padded_with_ignore_index():
    lengths = make_lengths(20, 8, spread=0.75, seed=1)
    assert lengths.min() >= 2 and lengths.max() <= 14 and len(set(lengths.tolist())) > 1
    tokens, targets = make_sequences(lengths, vocab=VOCAB)
    for row, length in enumerate(lengths.tolist()):
        assert (tokens[row, :length] > 0).all() and (tokens[row, length:] == 0).all()
        assert (targets[row, length:] == -100).all() and (targets[row, :length] >= 0).all()
        assert targets[row, length - 1] == tokens[row, :length].sum() % VOCAB
    with pytest.raises(ValueError, match="spread"):
        make_lengths(4, 8, spread=1.5)


def test_token_errors_grow_with_spread_and_sorting():
    even = compute_token_errors(0.0)
    spread = compute_token_errors(1.0)
    sorted_ = compute_token_errors(1.0, sort=True)
    assert even.broken < 1e-12 < 1e-2 < spread.broken < sorted_.broken
    assert max(even.fixed, spread.fixed, sorted_.fixed) < 1e-12
    extreme = token_errors_for_lengths(torch.tensor([1] * 4 + [64] * 4), accumulation_steps=2)
    assert extreme.tokens_per_micro_batch == [4, 256] and extreme.broken > 1.0
    assert f"token mean / N {extreme.broken:.1%}" in " ".join(repr(extreme).split())


def test_spread_explorer_shows_the_latest_value(capsys):
    from gradacc_lessons.figures.explorers import spread_explorer, spread_report

    explorer = spread_explorer(accumulation_steps=4)
    slider, output = explorer.children
    assert "gradacc-spread-slider" in slider._dom_classes
    assert "gradacc-spread-output" in output._dom_classes
    for value in (0.1, 0.9, 0.0, 0.3):  # moved quickly: each handler reads the current value
        slider.value = value
    shown = capsys.readouterr().out.strip().split("spread of lengths")[-1]
    assert "spread of lengths" + shown == spread_report(0.3, compute_token_errors(0.3))
    assert compute_token_errors(0.3).broken > 1e-2
