"""The reference the loop exercises share: each window trained as one full batch.

The window, token and no_sync exercises differ in their model, their loss and what else they
check, not in this: each window of the case's micro-batches concatenated into one batch, one
backward, one optimizer step. It runs in the grader's process, never in the sandbox.
"""

import torch


def weights_after_full_batches(case, make_model, loss_fn):
    """The weights after one full-batch step per window of `case` (each a nested list).

    `make_model(case)` gives the model and optimizer the student's function got;
    `loss_fn(outputs, targets)` is the window's loss over all its samples (or tokens).
    """
    model, optimizer = make_model(case)
    batches, accumulation_steps = case["batches"], case["accumulation_steps"]
    for first in range(0, len(batches), accumulation_steps):
        window = batches[first : first + accumulation_steps]
        optimizer.zero_grad()
        inputs = torch.cat([x for x, _ in window])
        targets = torch.cat([y for _, y in window])
        loss_fn(model(inputs), targets).backward()
        optimizer.step()
    return [p.detach().tolist() for p in model.parameters()]
