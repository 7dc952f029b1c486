# SPDX-License-Identifier: MIT
"""The OOM guard (docs/oom-guard.md): runs a training step's forward and backward as
micro-batches, so that a CUDA out-of-memory error splits the same batch and retries it instead of
ending the run, and memory that is about to run out splits it before the error.

Contract:
- The gradients a step leaves equal the full batch's: micro-batch i's mean loss is weighted by
  its share of the batch (n_i / n) before its backward. Nothing else is changed; losses must be
  means over the samples, and statistics computed per batch (BatchNorm) see micro-batches.
- A retry starts from no gradients (every parameter's .grad is set to None, and zero_grad() is
  called when given, for parameters outside the model): call optimizer.zero_grad() before run().
  BatchNorm's running statistics are put back as they were before the failed attempt.
- Raised into the loop: the user's own errors, as they were, and the OOM at the floor
  (min_micro_batch_size), as it was. Nothing else; no thread.
- DDP (torch.nn.parallel.DistributedDataParallel): the guard owns the model's gradient sync
  (require_backward_grad_sync and require_forward_param_sync are set False for good, also
  when the guard runs inside DDP.forward, as Lightning's training_step does); one
  all_reduce(MAX) per attempt agrees on whether any rank ran out of memory and on the next
  micro-batch size, so all ranks switch at the same step; the gradients are then averaged here
  (flattened buckets), after the backward rather than overlapped with it. Any other model under
  torch.distributed with more than one rank (FSDP, DeepSpeed): every OOM is raised, as at the
  floor (a retry on one rank alone would leave the others waiting in a collective).
- Every action is kept in guard.actions and sent to the agent as an `action` message when the
  monitor is active (gpumon._actions).
Not thread-safe: one training thread calls run().
"""

import collections.abc
import operator
import traceback

from gpumon import _oom
from gpumon._actions import action_line

_GIB = float(1 << 30)
_WHOLE = (1 << 62)  # "the whole batch" as a micro-batch size in DDP's all_reduce
_BUCKET_BYTES = 25 << 20  # gradients all-reduced per flattened bucket, at most (DDP's default)


def is_oom(exc):
    """A CUDA out-of-memory error: torch.cuda.OutOfMemoryError, or a RuntimeError saying so."""
    try:
        if any(c.__name__ == "OutOfMemoryError" for c in type(exc).__mro__):
            return True
        return isinstance(exc, RuntimeError) and "out of memory" in str(exc)
    except Exception:
        return False


def _gib(n):
    return "%.2f GiB" % (n / _GIB)


class CudaMemoryProbe:
    """The default memory probe on CUDA: one call reads the caching allocator's figures since the
    previous call and resets its peaks (torch.cuda.reset_peak_memory_stats: the monitor's
    allocator peaks then also count from the last probe). Returns a dict of bytes:
    total_bytes, outside_bytes (used on the device but not by this allocator: other processes,
    the CUDA context, NCCL), reserved_bytes / allocated_bytes (now), peak_reserved_bytes /
    peak_allocated_bytes (since the last call), num_alloc_retries (cumulative)."""

    def __init__(self, torch, device):
        self._torch = torch
        self._device = device

    def __call__(self):
        cuda = self._torch.cuda
        s = cuda.memory_stats(self._device)
        free, total = cuda.mem_get_info(self._device)
        cuda.reset_peak_memory_stats(self._device)
        reserved = s.get("reserved_bytes.all.current", 0)
        return {"total_bytes": total, "outside_bytes": max(total - free - reserved, 0),
                "reserved_bytes": reserved,
                "allocated_bytes": s.get("allocated_bytes.all.current", 0),
                "peak_reserved_bytes": s.get("reserved_bytes.all.peak", reserved),
                "peak_allocated_bytes": s.get("allocated_bytes.all.peak", 0),
                "num_alloc_retries": s.get("num_alloc_retries", 0)}


class OomGuard:
    """See Monitor.oom_guard() for the arguments and docs/oom-guard.md for the use."""

    def __init__(self, mon, model, min_micro_batch_size=1, micro_batch_size=None, backward=None,
                 split=None, sample_count=None, memory_probe=None, probe_every=10,
                 headroom_margin=0.02, hysteresis_steps=300, predict=True, zero_grad=None,
                 weight=None):
        import torch
        if int(min_micro_batch_size) < 1:
            raise ValueError("min_micro_batch_size must be >= 1, not %r" % (min_micro_batch_size,))
        if micro_batch_size is not None and int(micro_batch_size) < int(min_micro_batch_size):
            raise ValueError("micro_batch_size %r is under min_micro_batch_size %r"
                             % (micro_batch_size, min_micro_batch_size))
        self._torch = torch
        self._mon = mon
        self._model = model
        self._floor = int(min_micro_batch_size)
        self._micro = None if micro_batch_size is None else int(micro_batch_size)
        self._backward = backward
        self._split = split
        self._sample_count = sample_count
        self._zero_grad = zero_grad
        self._zero_grad_to_none = zero_grad is not None and _takes(zero_grad, "set_to_none")
        self._weight = weight
        self._probe_every = max(int(probe_every), 1)
        self._margin = float(headroom_margin)
        self._hysteresis = max(int(hysteresis_steps), 0)
        self._predict = bool(predict)
        self._steps = 0  # run() calls that completed
        self._last_change = None  # the step of the last change of the micro-batch size
        self._oomed = {}  # micro-batch size -> step of its last OOM (None: the whole batch)
        self._batch_size = None  # of the last batch run
        self._probes = []  # the last three probe readings
        self._evidence = None  # the last probe reading
        self._why = None  # what the last predicted split came from: "headroom" or "retries"
        self._estimate = 0  # the estimated peak allocated bytes of the last merge proposed
        self._ddp = isinstance(model, torch.nn.parallel.DistributedDataParallel)
        self._has_grad = None  # DDP: per trainable parameter, whether any rank has its gradient
        if self._ddp:
            # The guard owns DDP's sync for this model, for good: entered per attempt, no_sync()
            # would set require_backward_grad_sync back to True on exit, before DDP's own
            # post-forward when run() is called inside DDP.forward (Lightning's training_step),
            # which then arms the reducer for the guard's next backward (bucket all-reduces
            # that an OOM on one rank mismatches).
            model.require_backward_grad_sync = False
            model.require_forward_param_sync = False
        # Under torch.distributed with other ranks but not DDP (FSDP, DeepSpeed, ...): a retry
        # on this rank alone would leave the others waiting in a collective.
        self._alone = False
        dist = getattr(torch, "distributed", None)
        if (not self._ddp and dist is not None and dist.is_available() and dist.is_initialized()
                and dist.get_world_size() > 1):
            from gpumon._monitor import _warn_once
            _warn_once("oom-guard-distributed",
                       "OomGuard on a %s under torch.distributed with %d ranks: not DDP, so "
                       "the ranks cannot agree on a retry; every OOM is raised as it was, and "
                       "no split is predicted" % (type(model).__name__, dist.get_world_size()))
            self._alone = True
            self._predict = predict = False
        # BatchNorm's running statistics, put back after a failed attempt (modules found once).
        norm = torch.nn.modules.batchnorm._BatchNorm
        norms = [m for m in model.modules() if isinstance(m, norm)
                 and m.track_running_stats and m.running_mean is not None]
        # Where each statistic lives: read from the module's _buffers dict, not as an attribute
        # (nn.Module.__getattr__ is a Python function: 159 reads of it cost ~75 us a step).
        self._norms = [(m._buffers, name) for m in norms
                       for name in ("running_mean", "running_var", "num_batches_tracked")
                       if m._buffers.get(name) is not None]
        self._norm_live = None   # the buffers saved before this step, as (live, saved) groups
        self._norm_saved = None
        self._cuda = any(p.is_cuda for p in model.parameters())
        if memory_probe is None and self._cuda and predict:
            device = next(p.device for p in model.parameters() if p.is_cuda)
            memory_probe = CudaMemoryProbe(torch, device)
        self._probe = memory_probe
        self.actions = []

    @property
    def micro_batch_size(self):
        """The micro-batch size now; None while the whole batch runs at once."""
        return self._micro

    def run(self, batch, forward):
        """Runs forward(micro_batch) -> mean loss and its backward on `batch`, in micro-batches
        when needed; returns the batch's loss (detached, weighted)."""
        step = self._steps
        if self._norms:
            self._save_norms()
        while True:
            loss, oom = self._attempt(batch, forward, self._micro)
            proposal = self._proposal(step, batch) if oom is None else None
            if self._ddp:
                any_oom, agreed = self._agree(oom is not None, batch, proposal)
            else:
                any_oom, agreed = oom is not None, proposal
            if not any_oom:
                if self._ddp:
                    self._reduce_grads()
                self._steps += 1
                if agreed is not None and agreed != self._micro:
                    self._change(agreed, "predicted" if self._below(agreed) else "headroom",
                                 step + 1, None)
                return loss
            loss = None
            self._recover(oom)
            self._after_oom(batch, oom, agreed, step)

    # One attempt ---------------------------------------------------------------------------

    def _attempt(self, batch, forward, size):
        """(the batch's loss, None), or (None, the OOM it ran into); other errors pass through."""
        try:
            with self._no_sync():
                if size is None or (self._split is None and self._count(batch) <= size):
                    loss = forward(batch)
                    self._run_backward(loss)
                    return loss.detach(), None
                parts = self._parts(batch, size)
                if self._weight is not None:
                    weights = [self._weight(p) for p, _ in parts]
                    weights = [float(n if w is None else w) for (_, n), w in zip(parts, weights)]
                    if sum(weights) > 0:  # else (nothing labelled) by the sample counts
                        parts = [(p, w) for (p, _), w in zip(parts, weights)]
                total = float(sum(n for _, n in parts))
                out = None
                for part, n in parts:
                    loss = forward(part)
                    weight = n / total
                    self._run_backward(loss * weight)
                    done = loss.detach() * weight
                    out = done if out is None else out + done
                    loss = done = None
                return out, None
        except Exception as e:
            if not is_oom(e):
                raise
            return None, e

    def _run_backward(self, loss):
        if self._backward is None:
            loss.backward()
        else:
            self._backward(loss)

    def _no_sync(self):
        if self._ddp:
            # Set at construction, again here in case anything set them back. DDP broadcasts the
            # buffers before a forward that follows a synced backward; a forward that raised
            # never clears that flag, so the rank that ran out of memory would broadcast again
            # at its retry and wait for ranks that do not: the guard broadcasts them itself
            # after each step (_reduce_grads), never inside one. No backward is synced by DDP:
            # the guard averages the gradients after the step.
            self._model.require_backward_grad_sync = False
            self._model.require_forward_param_sync = False
        return _NO_CONTEXT

    def _recover(self, oom):
        """Frees what the failed attempt (of any rank) held: the frames of its traceback (their activations),
        the gradients, and the allocator's cached blocks."""
        if oom is not None:  # None: another rank's OOM
            traceback.clear_frames(oom.__traceback__)
        for p in self._model.parameters():
            p.grad = None
        if self._zero_grad is not None:  # parameters outside the model
            if self._zero_grad_to_none:
                self._zero_grad(set_to_none=True)
            else:
                self._zero_grad()
        if self._norm_saved is not None:
            with self._torch.no_grad():
                for live, saved in self._norm_saved:
                    _copy_all(self._torch, live, saved)
        if self._cuda:
            self._torch.cuda.empty_cache()

    def _save_norms(self):
        """Copies the BatchNorm running statistics into buffers kept from step to step: one
        fused copy per device and dtype where torch has _foreach_copy_ (a ResNet-50 has 53
        such layers, 159 small tensors: cloning them cost a launch and an allocation each).
        The buffers are made again when the module's tensors changed (model.to() replaces
        them); holding the old ones keeps their ids from being reused meanwhile."""
        live = [buffers[name] for buffers, name in self._norms]
        known = self._norm_live
        if known is None or not all(map(operator.is_, live, known)):
            self._norm_live = live
            groups = {}
            for t in live:
                if t is not None:  # a statistic set to None since: nothing to put back
                    groups.setdefault((t.device, t.dtype), []).append(t)
            self._norm_saved = [(ts, [t.detach().clone() for t in ts]) for ts in groups.values()]
            return
        for ts, saved in self._norm_saved:
            _copy_all(self._torch, saved, ts)

    # Splitting -----------------------------------------------------------------------------

    def _count(self, batch):
        """The number of samples in `batch`: sample_count(batch), else the first tensor's
        length along dim 0."""
        if self._sample_count is not None:
            return int(self._sample_count(batch))
        t = _first_tensor(self._torch, batch)
        if t is None or t.dim() == 0:
            raise ValueError("gpumon oom_guard: no tensor with a batch dimension in the batch "
                             "(%s): pass sample_count= and split=" % type(batch).__name__)
        return int(t.shape[0])

    def _parts(self, batch, size):
        """[(micro-batch, its sample count)], in order."""
        if self._split is not None:
            parts = list(self._split(batch, size))
            return [(p, self._count(p)) for p in parts]
        n = self._count(batch)
        k = -(-n // size)
        chunks = _split(self._torch, batch, size, n, k)
        return [(c, min(size, n - i * size)) for i, c in enumerate(chunks)]

    def _effective(self, size):
        """The micro-batch size that ran: the batch size when the whole batch did."""
        if size is None or (self._batch_size is not None and size > self._batch_size):
            return self._batch_size
        return size

    # Deciding ------------------------------------------------------------------------------

    def _after_oom(self, batch, oom, agreed, step):
        """Any rank ran out of memory: halve (agreed in DDP) or, at the floor, raise."""
        mine = oom is not None
        if self._alone:  # not DDP under torch.distributed: the other ranks could not follow
            try:
                self._batch_size = self._count(batch)
            except ValueError:
                pass
            current = self._effective(self._micro)
            self._act("oom_floor", "oom", step, current, current, oom)
            raise oom
        try:  # this batch's size (the last one of an epoch may be smaller)
            self._batch_size = self._count(batch)
            current = self._effective(self._micro)
            smaller = agreed if agreed is not None else self._halve(current)
            if smaller is not None and smaller < current:
                self._parts(batch, smaller)  # a trial: can it be split at all?
        except ValueError as e:  # a batch it cannot split: the OOM stands
            from gpumon._monitor import _warn_once
            _warn_once("oom-guard-split", "the OOM guard cannot split this batch: %s" % e)
            if mine:
                raise oom
            raise self._oom_error(
                "gpumon oom_guard: another rank ran out of memory and this batch cannot be "
                "split: %s" % e)
        self._oomed[current] = step
        if current <= self._floor or smaller is None or smaller >= current:
            self._act("oom_floor", "oom", step, current, current, oom)
            if mine:
                raise oom
            raise self._oom_error(
                "gpumon oom_guard: another rank ran out of memory at step %d with micro-batch "
                "%d, the floor (min_micro_batch_size=%d)" % (step, current, self._floor))
        self._change(smaller, "oom", step, oom)

    def _oom_error(self, message):
        """The error a rank raises for another rank's OOM: torch's OOM type (a RuntimeError
        before torch 1.13), with "CUDA out of memory" in its message as torch's own."""
        kind = getattr(self._torch.cuda, "OutOfMemoryError", RuntimeError)
        return kind("CUDA out of memory: " + message)

    def _halve(self, size):
        if size is None or size <= self._floor:
            return None
        return max(self._floor, -(-size // 2))

    def _below(self, size):
        return self._effective(self._micro) is None or size < self._effective(self._micro)

    def _proposal(self, step, batch):
        """The micro-batch size this rank wants from the next step on (None: unchanged): from a
        memory probe every probe_every steps."""
        if self._probe is None or not self._predict or (step + 1) % self._probe_every:
            return None
        try:
            reading = self._probe()
            if self._micro is None:
                self._batch_size = self._count(batch)
        except Exception as e:  # the guard goes on acting on OOMs
            from gpumon._monitor import _warn_once
            _warn_once("oom-guard-probe", "the OOM guard's memory probe is off after %r; it "
                       "still splits on an OOM" % (e,))
            self._probe = None
            return None
        self._probes = (self._probes + [reading])[-3:]
        self._evidence, self._why = reading, None
        current = self._effective(self._micro)
        if current is None:
            return None
        # What a step needs is its peak *allocated* memory: the allocator's cache above it
        # (reserved) is given back before an OOM, and it does not shrink after a split, so
        # judging by the peak reserved would split again and again (seen on an H200).
        total = reading["total_bytes"]
        margin = self._margin * total
        available = total - reading["outside_bytes"]  # free + this allocator's reserved
        peak = reading["peak_allocated_bytes"]
        headroom = available - peak
        # Static memory (weights, gradients, optimizer state) is what stays allocated after the
        # backward; the rest of the peak grows with the micro-batch.
        activation = max(peak - reading["allocated_bytes"], 0)
        retries = [p.get("num_alloc_retries") or 0 for p in self._probes]
        growing = len(retries) == 3 and retries[0] < retries[1] < retries[2]
        smaller = self._halve(current)
        if smaller is not None and smaller < current:
            if growing:
                self._why = "retries"
                return smaller
            # Split only where halving gives the margin back: where the static part leaves
            # no room, smaller micro-batches would not help, and the OOM path stays.
            if headroom < margin <= headroom + activation * (current - smaller) / current:
                self._why = "headroom"
                return smaller
        bigger = self._bigger(step, current)
        if bigger is None:
            return None
        # Twice the margin after a merge, so the split rule does not undo it at once.
        estimate = peak + activation * (bigger - current) / float(current)
        if available - estimate >= 2 * margin:
            self._estimate = estimate
            return bigger
        return None

    def _bigger(self, step, current):
        """Twice the micro-batch when the hysteresis allows it, else None."""
        if self._micro is None or self._batch_size is None or current >= self._batch_size:
            return None
        if self._last_change is not None and step + 1 - self._last_change < self._hysteresis:
            return None
        bigger = min(current * 2, self._batch_size)
        for size, when in self._oomed.items():
            if size <= bigger and step + 1 - when < 4 * self._hysteresis:
                return None
        return bigger

    def _agree(self, oomed, batch, proposal):
        """One all_reduce(MAX) over the ranks: whether any ran out of memory, the smallest
        halving proposed, and the smallest micro-batch size wanted next."""
        torch = self._torch
        dist = torch.distributed
        if self._batch_size is None or self._micro is None:
            try:
                self._batch_size = self._count(batch)
            except ValueError:
                pass
        halved = self._halve(self._effective(self._micro))
        wanted = proposal if proposal is not None else (self._micro or _WHOLE)
        device = next(self._model.parameters()).device
        # and, per trainable parameter, whether this rank has its gradient: one the MAX leaves
        # at 0 was used by no rank and stays None, as under DDP.
        has = [0 if p.grad is None else 1 for p in self._model.parameters() if p.requires_grad]
        flags = torch.tensor([1 if oomed else 0, -(halved or _WHOLE), -wanted] + has,
                             dtype=torch.int64, device=device)
        dist.all_reduce(flags, op=dist.ReduceOp.MAX, group=self._model.process_group)
        flags = flags.tolist()  # the host-device sync of a step
        any_oom, halved, wanted = flags[:3]
        self._has_grad = flags[3:]
        if any_oom:
            return True, (None if -halved >= _WHOLE else -halved)
        wanted = -wanted
        if wanted >= _WHOLE or wanted == self._micro:
            return False, None
        return False, wanted

    def _change(self, size, reason, step, oom):
        previous = self._effective(self._micro)
        self._micro = size
        self._last_change = step
        kind = "oom_split" if reason in ("oom", "predicted") else "oom_merge"
        self._act(kind, reason, step, size, previous, oom)

    # Telling -------------------------------------------------------------------------------

    def _act(self, kind, reason, step, size, previous, oom):
        n = self._batch_size
        evidence = self._evidence_of(kind, reason, oom)
        count = -(-n // size) if n and size else None
        if kind == "oom_floor":
            summary = ("%s at step %d with micro-batch %s, the floor (min_micro_batch_size=%d): "
                       "the OOM is raised" % ("CUDA OOM" if oom is not None else
                                              "CUDA OOM on another rank", step, size,
                                              self._floor))
            if self._alone:
                summary = ("CUDA OOM at step %d with micro-batch %s under torch.distributed, not "
                           "DDP (the ranks cannot agree on a retry): the OOM is raised"
                           % (step, size))
        elif reason == "oom":
            where = "CUDA OOM" if oom is not None else "CUDA OOM on another rank"
            summary = ("%s at step %d: split the batch of %s into %s micro-batches of %d; "
                       "effective batch unchanged" % (where, step, n, count, size))
        elif reason == "predicted":
            summary = ("%s: micro-batch %s -> %d from step %d (%s micro-batches of a batch of "
                       "%s), before an OOM" % (self._predicted_words(evidence), previous, size,
                                               step, count, n))
        else:
            summary = ("headroom returned (estimated peak %s at micro-batch %d leaves %s over "
                       "the margin): micro-batch %s -> %d from step %d"
                       % (_gib(evidence.get("estimated_peak_bytes", 0)), size,
                          _gib(evidence.get("headroom_after_bytes", 0)), previous, size, step))
        ahead = reason in ("predicted", "headroom")  # from the next step on
        action = {"action": kind, "step": self._message_step(step, ahead), "summary": summary,
                  "reason": reason, "batch_size": n, "micro_batch_size": size,
                  "previous_micro_batch_size": previous, "evidence": evidence}
        self.actions.append(action)
        self._send(action)

    def _message_step(self, step, ahead):
        """The monitor's step number when it is active (the step in progress, or the next one
        for a change that applies from there), else the guard's count of run() calls."""
        mon = self._mon
        if mon is not None and mon.active:
            return mon._step_number() + (1 if ahead else 0)
        return step

    def _evidence_of(self, kind, reason, oom):
        evidence = {}
        if oom is not None:
            requested, total, free = _oom.parse_message(str(oom))
            evidence.update(requested_bytes=requested, total_bytes=total, free_bytes=free)
        if oom is None and reason == "oom":
            evidence["oom_on_other_rank"] = 1
        reading = self._evidence if reason != "oom" else None
        if reading is not None:
            total = reading["total_bytes"]
            evidence.update(
                total_bytes=total, outside_bytes=reading["outside_bytes"],
                peak_allocated_bytes=reading["peak_allocated_bytes"],
                headroom_bytes=total - reading["outside_bytes"] - reading["peak_allocated_bytes"],
                margin_bytes=int(self._margin * total),
                num_alloc_retries=reading.get("num_alloc_retries"))
            if reason == "headroom":
                estimate = self._estimate
                evidence.update(estimated_peak_bytes=int(estimate),
                                headroom_after_bytes=int(total - reading["outside_bytes"]
                                                         - estimate - self._margin * total))
            if reason == "predicted":
                evidence["trigger"] = self._why or "other_rank"
        return {k: v for k, v in evidence.items() if v is not None}

    @staticmethod
    def _predicted_words(e):
        if e.get("trigger") == "other_rank":
            return "another rank predicted an OOM"
        if e.get("trigger") == "retries":
            return ("the allocator retried (num_alloc_retries %s) in two probes in a row"
                    % e.get("num_alloc_retries"))
        if "headroom_bytes" in e:
            return ("headroom %s under the margin of %s (peak allocated %s of %s, %s outside "
                    "PyTorch)" % (_gib(e["headroom_bytes"]), _gib(e["margin_bytes"]),
                                  _gib(e["peak_allocated_bytes"]), _gib(e["total_bytes"]),
                                  _gib(e["outside_bytes"])))
        return "another rank predicted an OOM"

    def _send(self, action):
        mon = self._mon
        if mon is None or not mon.active:
            return
        try:
            fields = dict(action)
            line = action_line(fields.pop("action"), fields.pop("step"), fields.pop("summary"),
                               **fields)
            mon._send_now(line)
        except Exception as e:
            from gpumon._monitor import _warn_once
            _warn_once("oom-guard-send", "an OOM guard action was not sent: %r" % (e,))

    # DDP -----------------------------------------------------------------------------------

    def _reduce_grads(self):
        """Averages the gradients over the ranks (what DDP's reducer does during the backward),
        in flattened buckets of at most 25 MiB per dtype and device, each divided by the world
        size before its all_reduce (as DDP does: no fp16 overflow of the sum); a parameter that
        got no gradient on this rank counts as zeros, one that no rank got stays None. Then the buffers from rank 0, as DDP's
        broadcast_buffers does before each forward."""
        torch = self._torch
        dist = torch.distributed
        from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors
        group = self._model.process_group
        world = dist.get_world_size(group)
        buckets, sizes = collections.OrderedDict(), {}
        params = [p for p in self._model.parameters() if p.requires_grad]
        used = self._has_grad if self._has_grad is not None else [1] * len(params)
        for p, anyone in zip(params, used):
            if not anyone:
                continue
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            key = (p.grad.device, p.grad.dtype)
            nbytes = p.grad.numel() * p.grad.element_size()
            if key not in buckets or sizes[key] + nbytes > _BUCKET_BYTES and buckets[key][-1]:
                buckets.setdefault(key, []).append([])
                sizes[key] = 0
            buckets[key][-1].append(p.grad)
            sizes[key] += nbytes
        for key in buckets:
            for grads in buckets[key]:
                flat = _flatten_dense_tensors(grads)
                flat.div_(world)
                dist.all_reduce(flat, group=group)
                for g, reduced in zip(grads, _unflatten_dense_tensors(flat, grads)):
                    g.copy_(reduced)
        buffers = [b for b in self._model.module.buffers()]
        if getattr(self._model, "broadcast_buffers", False) and buffers:
            coalesced = getattr(dist, "_broadcast_coalesced", None)
            if coalesced is not None:
                coalesced(group, buffers, 250 << 20, 0)
            else:
                for b in buffers:
                    dist.broadcast(b, src=0, group=group)


def _copy_all(torch, dst, src):
    """dst[i].copy_(src[i]) for all i: one fused copy where torch has _foreach_copy_ (2.1+)."""
    if hasattr(torch, "_foreach_copy_"):
        torch._foreach_copy_(dst, src)
    else:
        for d, s in zip(dst, src):
            d.copy_(s)


def _takes(fn, name):
    """Whether fn accepts the keyword `name` (a zero_grad(set_to_none=...))."""
    import inspect
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


class _NoContext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


_NO_CONTEXT = _NoContext()


def _first_tensor(torch, obj):
    if torch.is_tensor(obj):
        return obj
    if isinstance(obj, collections.abc.Mapping):
        obj = obj.values()
    elif not isinstance(obj, (tuple, list)):
        return None
    for x in obj:
        t = _first_tensor(torch, x)
        if t is not None:
            return t
    return None


def _split(torch, obj, size, n, k):
    """`obj` cut into k micro-batches of `size` samples along dim 0: tensors of length n are
    split (views), tuples / lists / mappings recursively, anything else is repeated."""
    if torch.is_tensor(obj):
        if obj.dim() == 0 or obj.shape[0] != n:
            raise ValueError("gpumon oom_guard: a tensor of shape %s in a batch of %d samples: "
                             "pass split=" % (tuple(obj.shape), n))
        return list(obj.split(size))
    if isinstance(obj, collections.abc.Mapping):
        per = {key: _split(torch, v, size, n, k) for key, v in obj.items()}
        out = []
        for i in range(k):
            items = [(key, per[key][i]) for key in obj]
            try:
                out.append(type(obj)(items))
            except Exception:
                out.append(dict(items))
        return out
    if isinstance(obj, (tuple, list)):
        per = [_split(torch, x, size, n, k) for x in obj]
        rows = [[p[i] for p in per] for i in range(k)]
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple
            return [type(obj)(*r) for r in rows]
        return [type(obj)(r) for r in rows]
    return [obj] * k

