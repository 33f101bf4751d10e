"""Where the batch engine's chunks run: this process, a local process pool, a
Ray cluster or a Dask cluster.

Design notes: docs/architecture.md, `mmverify/batch/executors.py`.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence


class ExecutorUnavailable(ImportError):
    """The chosen executor's package is not installed, or the spelling is unknown."""


class ExecutorUnreachable(ExecutorUnavailable):
    """The chosen cluster cannot be reached (nobody answers at its address) or
    started; the command says so and exits 2, as for a missing package."""


def _need(module: str, extra: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ExecutorUnavailable(f"the {extra} executor needs the '{module}' package, which is not installed; "
                                  f"install it with: pip install 'mmverify[{extra}]'") from None


class LocalExecutor:
    """Chunks run in this process, in order; an exception propagates."""

    workers = 1

    def share(self, objects: Sequence[Any]) -> tuple:
        return tuple(objects)

    def map_unordered(self, fn: Callable, handles: tuple, chunks: Sequence[Any]) -> Iterator[tuple[Any, bool, Any]]:
        for chunk in chunks:
            yield chunk, True, fn(*handles, chunk)

    def close(self) -> None:
        pass


def _call(args):
    fn, handles, chunk = args
    return chunk, fn(*handles, chunk)


class PoolExecutor:
    """A fresh ``multiprocessing`` pool of ``processes`` workers (``start_method``
    None is the platform default). Exceptions propagate."""

    def __init__(self, processes: int, start_method: str | None = None):
        import multiprocessing

        self.workers = processes
        self._pool = multiprocessing.get_context(start_method).Pool(processes=processes)

    def share(self, objects: Sequence[Any]) -> tuple:
        return tuple(objects)

    def map_unordered(self, fn, handles, chunks):
        for chunk, value in self._pool.imap_unordered(_call, [(fn, handles, c) for c in chunks]):
            yield chunk, True, value

    def close(self) -> None:
        self._pool.close()
        self._pool.join()


def _fork_context():
    """``fork`` where the platform has it (a worker starts with the driver's
    loaded modules and tasks, in milliseconds), else the platform default."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


_SHARED: tuple = ()


def _set_shared(objects: tuple) -> None:
    global _SHARED
    _SHARED = objects


def _call_shared(fn: Callable, chunk: Any) -> Any:
    return fn(*_SHARED, chunk)


class ProcessExecutor:
    """``processes`` local worker processes (``--jobs N``). The shared objects
    (the job, the keys already done) reach each worker once, when it starts
    (inherited by ``fork``, where the platform has it), not with every chunk;
    a chunk carries only its items. Chunks are runs of consecutive items
    (``grouped`` False: every worker has every task at hand). A worker that
    dies fails the chunks in flight (``BrokenProcessPool``), and the pool is
    started again for the engine's retry."""

    grouped = False

    def __init__(self, processes: int):
        self.workers = max(1, int(processes))
        self._handles: tuple = ()
        self._pool: Any = None

    def share(self, objects: Sequence[Any]) -> tuple:
        self._handles = tuple(objects)
        return ()

    def _start(self) -> Any:
        from concurrent.futures import ProcessPoolExecutor

        self._pool = ProcessPoolExecutor(self.workers, mp_context=_fork_context(), initializer=_set_shared,
                                         initargs=(self._handles,))
        return self._pool

    def map_unordered(self, fn, handles, chunks):
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        pool = self._pool or self._start()
        todo = iter(chunks)
        running: dict[Any, Any] = {}
        broken = False

        def feed() -> None:
            # a few chunks per worker in flight, no more: the driver holds the
            # results of those alone, however long the batch
            while not broken and len(running) < 2 * self.workers:
                chunk = next(todo, None)
                if chunk is None:
                    return
                try:
                    running[pool.submit(_call_shared, fn, chunk)] = chunk
                except BrokenProcessPool as exc:
                    failed.append((chunk, exc))

        failed: list[tuple[Any, BaseException]] = []
        feed()
        while running or failed:
            while failed:
                chunk, exc = failed.pop()
                broken = True
                yield chunk, False, exc
            if not running:
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                chunk = running.pop(fut)
                exc = fut.exception()
                if exc is None:
                    yield chunk, True, fut.result()
                else:                       # BrokenProcessPool: a worker died (killed, out of memory)
                    broken = broken or isinstance(exc, BrokenProcessPool)
                    yield chunk, False, exc
            del finished
            feed()
        if broken:
            # the chunks not sent fail too; the engine's retry gets a new pool
            for chunk in todo:
                yield chunk, False, BrokenProcessPool("a worker process died")
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


class RayExecutor:
    """Chunks as Ray tasks. ``address`` None joins ``RAY_ADDRESS`` or starts a
    local cluster (``num_cpus`` caps it); ``ray://HOST:PORT`` uses the Ray
    client. Ray's own task retries are off: the engine retries a failed chunk."""

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None):
        ray = _need("ray", "ray")
        self._ray = ray
        self._owns = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"address": address, "log_to_driver": False}
            if address is None:
                kwargs.update(num_cpus=num_cpus, include_dashboard=False)
            try:
                ray.init(**kwargs)
            except Exception as exc:   # an address nobody answers at, a cluster that will not start
                raise ExecutorUnreachable(f"the Ray cluster at {address or 'RAY_ADDRESS or a new local one'} "
                                          f"cannot be reached or started: {type(exc).__name__}: {exc}") from None
            self._owns = True
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._remote: dict[Callable, Any] = {}

    def share(self, objects):
        return tuple(self._ray.put(o) for o in objects)

    def map_unordered(self, fn, handles, chunks):
        ray = self._ray
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = ray.remote(max_retries=0)(fn)
        pending = {remote.remote(*handles, c): c for c in chunks}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                chunk = pending.pop(ref)
                try:
                    yield chunk, True, ray.get(ref)
                except Exception as exc:   # a dead worker, a lost node, an error in the chunk
                    yield chunk, False, _unwrap_ray(exc)

    def close(self) -> None:
        if self._owns:
            self._ray.shutdown()
            self._owns = False


def _unwrap_ray(exc: BaseException) -> BaseException:
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc


class DaskExecutor:
    """Chunks as Dask futures on ``client`` or on a client of ``address``
    (``tcp://HOST:PORT``); neither: a new ``LocalCluster``. A task whose worker
    died is rescheduled by Dask itself, then the engine retries it."""

    def __init__(self, address: str | None = None, *, client: Any = None, n_workers: int | None = None):
        distributed = _need("distributed", "dask")
        self._owns = client is None
        if client is None:
            if address is None:
                cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                                   dashboard_address=None)
                client = distributed.Client(cluster)
                self._cluster = cluster
            else:
                try:
                    client = distributed.Client(address)
                except Exception as exc:   # nobody answers at the address
                    raise ExecutorUnreachable(f"the Dask cluster at {address} cannot be reached: "
                                              f"{type(exc).__name__}: {exc}") from None
        self.client = client
        self._as_completed = distributed.as_completed
        self.workers = max(1, sum(client.nthreads().values()))

    def share(self, objects):
        return tuple(self.client.scatter([o], broadcast=True, hash=False)[0] for o in objects)

    def map_unordered(self, fn, handles, chunks):
        futures = {self.client.submit(fn, *handles, c, pure=False): c for c in chunks}
        for fut in self._as_completed(list(futures)):
            chunk = futures[fut]
            try:
                yield chunk, True, fut.result()
            except Exception as exc:   # KilledWorker, a lost connection, an error in the chunk
                yield chunk, False, exc

    def close(self) -> None:
        if self._owns:
            self.client.close()
            cluster = getattr(self, "_cluster", None)
            if cluster is not None:
                cluster.close()
            self._owns = False


def make_executor(spec: Any) -> Any:
    """An executor from a spelling (see the module doc) or an object."""
    if spec is None or spec == "local":
        return LocalExecutor()
    if hasattr(spec, "map_unordered"):
        return spec
    if getattr(spec, "__name__", None) == "ray":
        return RayExecutor()
    if type(spec).__module__.startswith("distributed") and hasattr(spec, "submit"):
        return DaskExecutor(client=spec)
    if isinstance(spec, str):
        if spec.startswith("local:") and spec[6:].isdigit() and int(spec[6:]) >= 1:
            n = int(spec[6:])
            return LocalExecutor() if n == 1 else ProcessExecutor(n)
        if spec == "ray":
            return RayExecutor()
        if spec.startswith("ray://"):
            return RayExecutor(spec)
        if spec == "dask":
            return DaskExecutor()
        if spec.startswith("dask://"):
            return DaskExecutor("tcp://" + spec[len("dask://"):])
    raise ExecutorUnavailable(f"unknown executor {spec!r}: use local, local:N, ray, ray://HOST:PORT, dask or dask://HOST:PORT")


def owned(spec: Any) -> bool:
    """Whether an executor made from ``spec`` belongs to the run (closed at its end)."""
    return not hasattr(spec, "map_unordered")
