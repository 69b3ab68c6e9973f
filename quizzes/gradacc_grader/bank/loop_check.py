"""The quick check of FAQ 3's loop exercise: real code, linted and tested like the rest.

`faq.py` pastes this file, from `import torch` on, into the locked check cell below the
student's function, followed by one call with the messages in the release's language. It
runs only in the student's notebook; it is never graded.
"""

import torch


def _quick_check(train_with_accumulation, messages):
    g = torch.Generator().manual_seed(0)
    start = torch.randn(1, 3, generator=g, dtype=torch.float64)
    batches = [
        (
            torch.randn(2, 3, generator=g, dtype=torch.float64),
            torch.randn(2, 1, generator=g, dtype=torch.float64),
        )
        for _ in range(4)
    ]

    def model_and_optimizer(leftover):
        model = torch.nn.Linear(3, 1, bias=False, dtype=torch.float64)
        with torch.no_grad():
            model.weight.copy_(start)
        model.weight.grad = torch.ones_like(start) if leftover else None
        return model, torch.optim.SGD(model.parameters(), lr=0.1)

    def by_hand(scale, leftover):  # two windows of two micro-batches, each loss times `scale`
        model, optimizer = model_and_optimizer(leftover)
        for window in (batches[:2], batches[2:]):
            for x, y in window:
                (torch.nn.functional.mse_loss(model(x), y) * scale).backward()
            optimizer.step()
            optimizer.zero_grad()
        return model.weight.detach()

    model, optimizer = model_and_optimizer(leftover=True)
    steps = []
    optimizer.register_step_post_hook(lambda *args: steps.append(1))
    copies = [(x.clone(), y.clone()) for x, y in batches]
    train_with_accumulation(model, optimizer, torch.nn.MSELoss(), copies, 2)
    weight = model.weight.detach()
    assert len(steps) != 4, messages["every"]
    assert len(steps) == 2, messages["count"].format(len(steps))
    assert model.weight.grad is None or not model.weight.grad.any(), messages["after"]
    assert not torch.allclose(weight, by_hand(1.0, False)), messages["divide"]
    assert not torch.allclose(weight, by_hand(0.5, True)), messages["leftover"]
    assert torch.allclose(weight, by_hand(0.5, False)), messages["other"]
    print(messages["passed"])
