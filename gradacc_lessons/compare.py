"""Side-by-side comparison of two sets of gradients (or parameters)."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Difference:
    """How far one tensor of `b` is from the same tensor of `a`."""

    name: str
    max_abs: float  # largest |a - b| over the tensor's entries
    max_rel: float  # max_abs relative to the largest |a| entry of the tensor


class Comparison:
    """Per-tensor differences between two {name: tensor} dicts, with overall maxima."""

    def __init__(self, rows: list[Difference], a: dict, b: dict):
        self.rows = rows
        self._a, self._b = a, b

    @property
    def max_abs(self) -> float:
        """The largest absolute difference over all tensors."""
        return max(row.max_abs for row in self.rows)

    @property
    def max_rel(self) -> float:
        """The largest relative difference over all tensors."""
        return max(row.max_rel for row in self.rows)

    def allclose(self, rtol: float = 1e-4, atol: float = 1e-5) -> bool:
        """True when every entry satisfies |a - b| <= atol + rtol * |b| (torch.allclose)."""
        return all(torch.allclose(self._a[n], self._b[n], rtol=rtol, atol=atol) for n in self._a)

    def __str__(self) -> str:
        width = max(len("parameter"), *(len(row.name) for row in self.rows))
        lines = [f"{'parameter':<{width}}  {'max abs diff':>12}  {'max rel diff':>12}"]
        for row in self.rows:
            lines.append(f"{row.name:<{width}}  {row.max_abs:12.3e}  {row.max_rel:12.3e}")
        lines.append(f"{'overall':<{width}}  {self.max_abs:12.3e}  {self.max_rel:12.3e}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"Comparison(tensors={len(self.rows)}, "
            f"max_abs={self.max_abs:.3e}, max_rel={self.max_rel:.3e})"
        )

    def _repr_html_(self) -> str:
        cells = "".join(
            f"<tr><td><code>{row.name}</code></td><td>{row.max_abs:.3e}</td>"
            f"<td>{row.max_rel:.3e}</td></tr>"
            for row in self.rows
        )
        return (
            "<table><thead><tr><th>parameter</th><th>max abs diff</th><th>max rel diff</th>"
            f"</tr></thead><tbody>{cells}<tr><td><b>overall</b></td><td><b>{self.max_abs:.3e}</b>"
            f"</td><td><b>{self.max_rel:.3e}</b></td></tr></tbody></table>"
        )


def compare_gradients(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> Comparison:
    """Compare two {name: tensor} dicts entry by entry.

    The relative difference of a tensor is its largest absolute difference over
    its largest entry in `a`: element-wise relative differences blow up on
    entries near zero, which are plentiful in gradients.

    >>> a = {"w": torch.tensor([1.0, 2.0])}
    >>> compare_gradients(a, {"w": torch.tensor([1.0, 2.5])}).max_rel
    0.25
    """
    if a.keys() != b.keys():
        raise ValueError(
            "both sides must name the same tensors; "
            f"only in the first: {sorted(a.keys() - b.keys())}, "
            f"only in the second: {sorted(b.keys() - a.keys())}"
        )
    if not a:
        raise ValueError("there is nothing to compare: both dicts are empty")
    rows = []
    for name in a:
        if a[name].shape != b[name].shape:
            raise ValueError(f"{name} has shape {tuple(a[name].shape)} vs {tuple(b[name].shape)}")
        diff = (a[name].detach() - b[name].detach()).abs().max().item()
        scale = a[name].detach().abs().max().item()
        relative = diff / scale if scale > 0 else (0.0 if diff == 0 else float("inf"))
        rows.append(Difference(name, diff, relative))
    return Comparison(rows, a, b)


def parameters_of(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A detached copy of the model's parameters, for comparing two trained models."""
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def accumulation_errors(
    model: torch.nn.Module,
    loss_fn,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    ns: list[int],
    normalize: str = "samples",
) -> list[float]:
    """The relative error of accumulated against full-batch gradients, for each N in `ns`.

    >>> model = torch.nn.Linear(3, 2)
    >>> x, y = torch.randn(10, 3), torch.randint(2, (10,))
    >>> errors = accumulation_errors(model, torch.nn.CrossEntropyLoss(), x, y, [1, 3])
    >>> all(e < 1e-5 for e in errors)
    True
    """
    from gradacc_lessons.accumulate import accumulated_gradients, full_batch_gradients

    full = full_batch_gradients(model, loss_fn, inputs, targets)
    return [
        compare_gradients(
            full, accumulated_gradients(model, loss_fn, inputs, targets, n, normalize)
        ).max_rel
        for n in ns
    ]
