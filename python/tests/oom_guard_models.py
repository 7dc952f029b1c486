# SPDX-License-Identifier: MIT
"""The OOM guard tests' model and data: a small MLP whose planted allocator raises
torch.cuda.OutOfMemoryError, as a CUDA one would, when a forward (or a backward) gets more
samples than it takes; the data is a function of the step and the rank."""
import torch

BATCH = 32
STEPS = 6
OOM_MESSAGE = ("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
               "79.11 GiB of which 1.25 GiB is free.")


class _OomInBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, model):
        ctx.model = model
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        model = ctx.model
        call, model.backward_calls = model.backward_calls, model.backward_calls + 1
        if call in model.fail_backward_calls:
            raise torch.cuda.OutOfMemoryError(OOM_MESSAGE)
        return grad, None


class Planted(torch.nn.Module):
    """limit: the largest batch a forward takes (None: any); fail_backward_calls: the numbers
    of the backward calls (counted from 0 over the model's life) that raise."""

    def __init__(self, limit=None, fail_backward_calls=()):
        super().__init__()
        self.limit = limit
        self.fail_backward_calls = set(fail_backward_calls)
        self.backward_calls = 0
        self.first = torch.nn.Linear(8, 16)
        self.rest = torch.nn.Sequential(torch.nn.Tanh(), torch.nn.Linear(16, 4))
        # A buffer (as BatchNorm's running statistics are), which DDP broadcasts: the samples
        # this replica's forwards began.
        self.register_buffer("seen", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        self.seen += x.shape[0]
        if self.limit is not None and x.shape[0] > self.limit:
            raise torch.cuda.OutOfMemoryError(OOM_MESSAGE)
        return self.rest(_OomInBackward.apply(self.first(x), self))


def batch_of(step, rank=0):
    g = torch.Generator().manual_seed(1000 * rank + step)
    return (torch.randn(BATCH, 8, generator=g, dtype=torch.float64).float(),
            torch.randn(BATCH, 4, generator=g, dtype=torch.float64).float())


def loss_of(model, micro_batch):
    x, y = micro_batch
    return torch.nn.functional.mse_loss(model(x), y)


def reference_grads(model, batch, size):
    """The gradients of `batch` accumulated in micro-batches of `size`, weighted by their share:
    what the guard must leave."""
    x, y = batch
    n = x.shape[0]
    for xs, ys in zip(x.split(size), y.split(size)):
        (loss_of(model, (xs, ys)) * (xs.shape[0] / n)).backward()
