"""A small U-Net for semantic segmentation: one class score per pixel, BatchNorm or GroupNorm.

The shape of the models a segmentation recipe trains at 1024 × 1024 (U-Net, DeepLab):
convolutions at full resolution, a downsampling path, an upsampling path with skip
connections, and a normalisation layer after every convolution. Its feature maps, not
its weights, fill the memory: a few million weights, but gigabytes of activations per
image at high resolution. torchvision's models cannot be installed here; this one is
written out in full so a learner can read every layer.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from gradacc_lessons.checks import as_choice, as_count


def _norm(norm: str, channels: int) -> nn.Module:
    if norm == "batch":
        return nn.BatchNorm2d(channels)
    return nn.GroupNorm(min(32, channels // 4) or 1, channels)


class _Block(nn.Sequential):
    """Two 3 × 3 convolutions, each followed by normalisation and ReLU."""

    def __init__(self, inputs: int, outputs: int, norm: str):
        super().__init__(
            nn.Conv2d(inputs, outputs, 3, padding=1, bias=False),
            _norm(norm, outputs),
            nn.ReLU(inplace=True),
            nn.Conv2d(outputs, outputs, 3, padding=1, bias=False),
            _norm(norm, outputs),
            nn.ReLU(inplace=True),
        )


class UNet(nn.Module):
    """U-Net: `depth` downsamplings by 2, channel widths doubling from `width` (64, as in the
    original U-Net of Ronneberger et al. 2015).

    >>> UNet(classes=5, width=8, depth=2)(torch.zeros(2, 3, 32, 32)).shape
    torch.Size([2, 5, 32, 32])
    """

    def __init__(
        self,
        classes: int = 21,
        width: int = 64,
        depth: int = 4,
        norm: str = "batch",
        in_channels: int = 3,
    ):
        super().__init__()
        classes, width = as_count("classes", classes, minimum=2), as_count("width", width)
        depth, in_channels = as_count("depth", depth), as_count("in_channels", in_channels)
        as_choice("norm", norm, ("batch", "group"))
        widths = [width * 2**i for i in range(depth + 1)]
        self.down = nn.ModuleList([_Block(in_channels, widths[0], norm)])
        self.down.extend(_Block(widths[i], widths[i + 1], norm) for i in range(depth))
        self.up = nn.ModuleList(
            nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2)
            for i in reversed(range(depth))
        )
        self.merge = nn.ModuleList(
            _Block(2 * widths[i], widths[i], norm) for i in reversed(range(depth))
        )
        self.head = nn.Conv2d(widths[0], classes, 1)
        self.checkpointing = False

    def gradient_checkpointing_enable(self) -> None:
        """Recompute each block's activations in backward instead of keeping them."""
        self.checkpointing = True

    def _run(self, block: nn.Module, x: torch.Tensor) -> torch.Tensor:
        if self.checkpointing and self.training:
            return checkpoint(block, x, use_reentrant=False)
        return block(x)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        skips = []
        x = images
        for i, block in enumerate(self.down):
            x = self._run(block, x if i == 0 else nn.functional.max_pool2d(x, 2))
            skips.append(x)
        for up, merge, skip in zip(self.up, self.merge, reversed(skips[:-1])):
            x = self._run(merge, torch.cat([up(x), skip], dim=1))
        return self.head(x)
