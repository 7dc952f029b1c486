# SPDX-License-Identifier: MIT
"""The adaptive loader's in-epoch prefetch stage (mon.wrap(loader, adapt=True,
prefetch_thread=True), docs/adaptive-loader.md): one thread that runs next() on the loader's
iterator ahead of the training loop and hands the batches over through a bounded queue, in
order, whose depth it deepens when the loop finds it empty while the loader ran ahead at other
times (a bursty loader).

It is the one thread gpumon starts in a training process, and only when asked. The thread is
a daemon and never runs gpumon code that could raise into training: it only iterates the
user's iterator and queues what comes out, the user's own exceptions included, which next()
raises in the training thread; after an error it goes on feeding, as the loader's iterator goes
on after one. close() (the epoch's end, a `break`, an exception, garbage collection of the
epoch) stops it and joins it for at most JOIN_S seconds: a thread still inside the loader's
next() then ends when that returns, without calling next() again. join() waits for that; the
adaptive loader calls it before it touches the loader again (a persistent iterator is the same
object in the next epoch). The batches are pinned by
the DataLoader's own pin_memory, as without the stage (with num_workers=0 that pinning, and
the Dataset's loading, run in this thread).

At interpreter exit a daemon thread that is still inside the loader is killed where it
stands, and when that is inside torch's C++ (a collate releasing the GIL) the process aborts
("terminate called without an active exception"). So an atexit hook stops every live stage
and waits for its current next() to return, at most EXIT_JOIN_S in all; it runs before
torch's own DataLoader exit hook (atexit runs the last registered first), while the workers
still deliver.

Thread-safety: next() and close() from the training thread only; the counters the thread
updates are read as approximate figures.
"""

import atexit
import queue
import threading
import time
import weakref

JOIN_S = 1.0
EXIT_JOIN_S = 10.0
_live = weakref.WeakSet()  # the stages whose thread may still run
_END = object()


class _Raised:
    def __init__(self, error):
        self.error = error


class PrefetchStage:
    """Iterates `iterator` in a thread, `depth` batches ahead (at most max_depth)."""

    def __init__(self, iterator, depth, max_depth, window=32):
        self.depth = depth
        self.max_depth = max_depth
        self.gets = self.empty_gets = 0  # the training thread's counts
        self.full_puts = 0  # the thread's: batches that waited for room
        self._window = window
        self._window_start = (0, 0)  # empty_gets, full_puts when the window began
        self._queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(iterator,), daemon=True,
                                        name="gpumon-prefetch")
        _register_exit_hook()
        _live.add(self)
        self._thread.start()

    def _run(self, iterator):
        try:
            self._feed(iterator)
        finally:
            iterator = None  # the loader's workers go when the epoch's last reference does

    def _feed(self, iterator):
        q, stop = self._queue, self._stop
        while not stop.is_set():
            try:
                item = next(iterator)
            except StopIteration:
                item = _END
            except BaseException as e:  # the user's error, raised in the training thread
                item = _Raised(e)
            try:
                q.put_nowait(item)
            except queue.Full:
                self.full_puts += 1
                while not stop.is_set():
                    try:
                        q.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
            if item is _END:
                return

    def __iter__(self):
        return self

    def __next__(self):
        q = self._queue
        self.gets += 1
        try:
            item = q.get_nowait()
        except queue.Empty:
            self.empty_gets += 1
            item = q.get()
        if self.gets % self._window == 0:
            self._adapt()
        if item is _END:
            raise StopIteration
        if isinstance(item, _Raised):
            raise item.error
        return item

    def _adapt(self):
        """Deeper when the loop found the queue empty in more than a tenth of the window's
        batches and the loader also ran ahead (a batch waited for room): a bursty loader. A
        loader that is slower throughout gains nothing from depth."""
        empty, full = self.empty_gets, self.full_puts
        start_empty, start_full = self._window_start
        self._window_start = (empty, full)
        if (empty - start_empty) * 10 > self._window and full > start_full and \
                self.depth < self.max_depth:
            self.depth = min(self.depth * 2, self.max_depth)
            q = self._queue
            with q.not_full:
                q.maxsize = self.depth
                q.not_full.notify()

    def close(self, timeout=JOIN_S):
        """Stops the thread and joins it (at most `timeout` seconds, None: until it ended);
        idempotent. A stopped thread calls next() no more: it ends when the next() it is in
        returns, or within 0.1 s when it waits for room in the queue."""
        self._stop.set()
        try:
            while True:
                self._queue.get_nowait()  # room for a put that waits
        except queue.Empty:
            pass
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def join(self):
        """Stops the thread and waits until it ended (its current next() returned)."""
        self.close(None)


_hooked = False


def _register_exit_hook():
    """Registers _close_at_exit once, after torch's DataLoader hook (imported by then)."""
    global _hooked
    if not _hooked:
        _hooked = True
        atexit.register(_close_at_exit)


def _close_at_exit():
    deadline = time.monotonic() + EXIT_JOIN_S
    stages = list(_live)
    for stage in stages:
        stage._stop.set()
    for stage in stages:
        stage.close(max(deadline - time.monotonic(), 0.0))
