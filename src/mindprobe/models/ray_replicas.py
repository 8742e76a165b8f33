"""Replicas of a local GGUF as llama.cpp servers on a Ray cluster, fed to the router.

`--model local[:PATH.gguf] --replicas N --ray [ADDRESS]` starts N Ray actors, spread over the
cluster's nodes by a SPREAD placement group (each gets an equal share of the CPUs, at most one
node's worth), each running an in-process llama.cpp server with its own random API key, bound to
its node's address (127.0.0.1 when mindprobe started Ray itself). Without ADDRESS a local Ray
instance is started for the run, so the same command works on a laptop. Everything is stopped at
the end of the run, on Ctrl-C and on failure (and at interpreter exit as a last resort).

On a remote cluster mindprobe (and, for `local`, its embedded model package) must be installed
on every node, and `local:PATH` must be readable on every node (a shared filesystem).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
from pathlib import Path
from typing import Any

from mindprobe.errors import ModelError
from mindprobe.models.endpoints import EndpointSpec

RAY_EXTRA_HINT = "pip install 'mindprobe[ray]'"


def ray_missing_message() -> str:
    return (f"--ray needs Ray, which is not installed; install the optional extra with "
            f"`{RAY_EXTRA_HINT}` (or `pip install ray`)")


def import_ray() -> Any:
    """The `ray` module, or one ModelError naming the extra that provides it."""
    try:
        import ray
    except ImportError:
        raise ModelError(ray_missing_message()) from None
    return ray


def _embedded_gguf() -> Path:
    """The embedded model, assembled once per node even when several replicas start at once."""
    from mindprobe.core.files import open_own
    from mindprobe.core.paths import cache_dir
    from mindprobe.models.local import default_gguf

    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        return default_gguf()
    lock = cache_dir() / "models" / ".assemble.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = open_own(lock, os.O_WRONLY | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return default_gguf()
    finally:
        os.close(fd)  # releases the lock


def start_llama_server(gguf: str | None, embedded: bool, n_parallel: int, ctx_per_slot: int,
                       threads: int, host: str) -> tuple[Any, str, str, str]:
    """(server, base URL, API key, sha256) of a llama.cpp server with the embedded engine's
    settings; `gguf` None: the embedded model, assembled on this node."""
    from mindprobe.models import local

    path = _embedded_gguf() if gguf is None else Path(gguf)
    if not path.is_file():
        raise ModelError(f"GGUF file not found on this node: {path}")
    server, url, key = local.start_llama_server(
        path, embedded=embedded, n_parallel=n_parallel, ctx_per_slot=ctx_per_slot,
        threads=threads, host=host)
    return server, url, key, local.gguf_sha256(path)


class LlamaReplica:
    """The Ray actor (wrapped with `ray.remote` at run time, so Ray stays optional)."""

    def __init__(self, gguf: str | None, embedded: bool, n_parallel: int, ctx_per_slot: int,
                 threads: int, loopback: bool) -> None:
        import ray

        self.node = ray.util.get_node_ip_address()
        host = "127.0.0.1" if loopback else self.node
        self.server, self.url, self.key, self.sha = start_llama_server(
            gguf, embedded, n_parallel, ctx_per_slot, threads, host)

    def info(self) -> dict[str, Any]:
        return {"url": self.url, "key": self.key, "sha256": self.sha, "node": self.node,
                "pid": os.getpid()}

    def stop(self) -> bool:
        self.server = None  # dropping the last reference stops and joins the server
        return True


def _reason(exc: BaseException) -> str:
    """The last line of a remote error (Ray wraps the actor's traceback into its message)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    last = lines[-1] if lines else type(exc).__name__
    return last.removeprefix("mindprobe.errors.ModelError: ")


class RayReplicas:
    """Starts and stops N llama.cpp replicas on Ray (the router's launcher)."""

    def __init__(self, gguf: Path | None, n: int, address: str | None, *, model: str,
                 ctx_per_slot: int = 8192, start_timeout: float = 600.0) -> None:
        if n < 1:
            raise ModelError(f"--replicas must be a positive number; got {n}")
        self.gguf = gguf
        self.n = n
        self.address = address or None
        self.model = model
        self.ctx_per_slot = ctx_per_slot
        self.start_timeout = start_timeout
        self._ray: Any = None
        self._owns_ray = False
        self._pg: Any = None
        self._actors: list[Any] = []
        self._sha = ""
        self.infos: list[dict[str, Any]] = []

    def pending(self) -> list[str]:
        where = f"Ray cluster {self.address}" if self.address else "a local Ray instance"
        return [f"replica {i + 1} of {self.n} on {where} (started at run time)"
                for i in range(self.n)]

    def identity(self) -> dict[str, Any]:
        return {"engine": "llama.cpp", "gguf_sha256": self._sha, "model": self.model}

    async def start(self, slots: int, timeout: float) -> list[EndpointSpec]:
        # Blocking on purpose: nothing else runs before the model has started, and Ray's
        # client calls are not meant for an event loop's thread pool.
        try:
            return self._start(slots)
        except BaseException:
            self._stop()
            raise

    def _start(self, slots: int) -> list[EndpointSpec]:
        ray = self._ray = import_ray()
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        atexit.register(self._stop)
        if not ray.is_initialized():
            quiet = {"logging_level": logging.ERROR, "log_to_driver": False}
            try:
                if self.address:
                    ray.init(address=self.address, **quiet)
                else:
                    ray.init(num_cpus=max(os.cpu_count() or 1, self.n), include_dashboard=False,
                             **quiet)
                    self._owns_ray = True
            except Exception as exc:  # ConnectionError, RuntimeError, ValueError …
                what = (f"connect to the Ray cluster at {self.address}" if self.address
                        else "start a local Ray instance")
                raise ModelError(f"could not {what}: {exc}") from None
        cpus = self._cpus_per_replica(ray)
        self._pg = placement_group([{"CPU": cpus}] * self.n, strategy="SPREAD")
        try:
            ray.get(self._pg.ready(), timeout=120)
        except Exception:
            total = ray.cluster_resources().get("CPU", 0)
            raise ModelError(f"the Ray cluster cannot place {self.n} replicas of {cpus} CPU(s) "
                             f"each (it has {total:g} CPUs); use fewer --replicas") from None
        actor = ray.remote(LlamaReplica)
        embedded = self.gguf is None
        if embedded and self._owns_ray:  # this machine: assemble the embedded model once, here
            from mindprobe.models.local import default_gguf

            gguf: str | None = str(default_gguf())
        else:
            gguf = None if embedded else str(Path(self.gguf).expanduser().resolve())
        for i in range(self.n):
            strategy = PlacementGroupSchedulingStrategy(placement_group=self._pg,
                                                        placement_group_bundle_index=i)
            self._actors.append(actor.options(num_cpus=cpus, scheduling_strategy=strategy)
                                .remote(gguf, embedded, slots, self.ctx_per_slot, cpus,
                                        self._owns_ray))
        try:
            self.infos = ray.get([a.info.remote() for a in self._actors],
                                 timeout=self.start_timeout)
        except Exception as exc:
            raise ModelError(f"a llama.cpp replica failed to start on Ray: {_reason(exc)}"
                             ) from None
        shas = {i["sha256"] for i in self.infos}
        if len(shas) != 1:
            raise ModelError("the replicas loaded different GGUF files (sha256 "
                             f"{', '.join(sorted(shas))}); make the same file available on "
                             "every node")
        self._sha = shas.pop()
        return [EndpointSpec(url=i["url"], concurrency=slots, key=i["key"],
                             source=f"ray replica {n + 1} on {i['node']}", llama_slots=True)
                for n, i in enumerate(self.infos)]

    def _cpus_per_replica(self, ray: Any) -> int:
        """An equal share of the cluster's CPUs, at most one node's worth (one per node when
        there are as many nodes as replicas)."""
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        per_node = [int(n.get("Resources", {}).get("CPU", 0)) for n in nodes]
        total = sum(per_node)
        biggest = max(per_node, default=0)
        return max(1, min(total // self.n, biggest))

    async def stop(self) -> None:
        self._stop()

    def _stop(self) -> None:
        """Idempotent: stop the servers, kill the actors, free the placement group, and shut
        down the Ray instance if this process started it."""
        ray = self._ray
        if ray is None:
            return
        actors, self._actors = self._actors, []
        if actors and ray.is_initialized():
            # Already dead or unreachable: killing is what matters.
            with contextlib.suppress(Exception):
                ray.get([a.stop.remote() for a in actors], timeout=30)
            for a in actors:
                with contextlib.suppress(Exception):
                    ray.kill(a, no_restart=True)
        if self._pg is not None and ray.is_initialized():
            from ray.util.placement_group import remove_placement_group

            with contextlib.suppress(Exception):
                remove_placement_group(self._pg)
        self._pg = None
        if self._owns_ray and ray.is_initialized():
            ray.shutdown()
        self._owns_ray = False
        self._ray = None
