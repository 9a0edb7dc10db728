"""aoa: compile and run AOA checkpoint conversions from Python.

The same compiler and runtime as the command-line tools (docs/python.md):

    plan = aoa.compile("statements.aoa", src="hf", layout="tp4.json")
    tensors = aoa.load(plan, rank=0, src_dir="hf")   # {name: numpy.ndarray}
    aoa.run(plan, "hf", "tp4")                         # as aoa-run does

Every failure raises aoa.Error with the text the tool would print (a bad
statement as ``file:line:col: error: ...``). Long calls release the GIL, and
Ctrl-C stops them cleanly with KeyboardInterrupt.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _aoa

__all__ = ["Error", "Plan", "LoadedTensors", "compile", "run", "load",
           "load_into", "rank_tensors", "scan", "numpy_dtype"]

#: Raised for every failure; its text is the tool's message (with the
#: located diagnostics and a ``hint:`` line where there is one).
Error = _aoa.Error
Error.__module__ = "aoa"

PathLike = Union[str, "os.PathLike[str]"]
#: A config: a path (Paddle JSON or a ``.aoa`` file), a dict (Paddle's JSON
#: config) or a list of statement strings.
Config = Union[PathLike, Mapping[str, Any], Sequence[str], None]
#: Shard metadata: a path (a metadata file or a checkpoint directory) or an
#: aoa-metadata v1 dict.
Metadata = Union[PathLike, Mapping[str, Any], None]

# aoa dtype name -> the numpy dtype its bytes are returned as. bfloat16 and
# the FP8 formats have no numpy dtype: their bits come as uint16 / uint8,
# and LoadedTensors.dtypes keeps the real name.
_NUMPY_DTYPES = {
    "float64": "float64", "float32": "float32", "float16": "float16",
    "bfloat16": "uint16", "int64": "int64", "int32": "int32",
    "int16": "int16", "int8": "int8", "uint64": "uint64", "uint32": "uint32",
    "uint16": "uint16", "uint8": "uint8", "bool": "bool",
    "float8_e4m3fn": "uint8", "float8_e5m2": "uint8",
    "float8_e8m0fnu": "uint8", "float8_e4m3fnuz": "uint8",
    "float8_e5m2fnuz": "uint8", "complex64": "complex64",
}


def numpy_dtype(aoa_dtype: str) -> str:
    """The numpy dtype name that holds a tensor of aoa dtype ``aoa_dtype``
    (bfloat16 -> uint16, FP8 -> uint8: their raw bits)."""
    try:
        return _NUMPY_DTYPES[aoa_dtype]
    except KeyError:
        raise Error(f"dtype '{aoa_dtype}' has no numpy equivalent") from None


class _Inputs:
    """Writes dict and list arguments to files in a temporary directory, so
    that the driver loads them exactly as it loads the tools' files."""

    def __init__(self) -> None:
        self._dir: Optional[tempfile.TemporaryDirectory] = None

    def __enter__(self) -> "_Inputs":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._dir is not None:
            self._dir.cleanup()

    def _write(self, name: str, value: Any) -> str:
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="aoa-")
        path = os.path.join(self._dir.name, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(value, f, indent=1)
        return path

    def config(self, config: Config) -> str:
        if config is None:
            return ""
        if isinstance(config, (str, os.PathLike)):
            return os.fspath(config)
        if isinstance(config, Mapping):
            return self._write("config.json", dict(config))
        if isinstance(config, Sequence) and all(isinstance(s, str) for s in config):
            return self._write("config.json", {"aoa_statements": list(config)})
        raise Error("config must be a path, a dict (Paddle's JSON config) or "
                    "a list of statement strings")

    def metadata(self, value: Metadata, name: str) -> str:
        if value is None:
            return ""
        if isinstance(value, (str, os.PathLike)):
            return os.fspath(value)
        if isinstance(value, Mapping):
            return self._write(name, dict(value))
        raise Error(f"{name.split('.')[0]} must be a path (a metadata file or "
                    "a checkpoint directory) or a metadata dict")

    def queries(self, queries: Union[PathLike, Sequence[Mapping[str, Any]], None]) -> str:
        if queries is None:
            return ""
        if isinstance(queries, (str, os.PathLike)):
            return os.fspath(queries)
        return self._write("queries.json", {"queries": [dict(q) for q in queries]})


class Plan:
    """A transfer plan, read and verified: what ``aoa-compile`` writes and
    ``aoa-run`` executes. Made by :func:`compile` or :meth:`Plan.load`."""

    def __init__(self, handle: Any, compiled_from: Optional[Dict[str, Any]] = None,
                 compile_summary: str = "") -> None:
        self._handle = handle
        self._compiled_from = compiled_from
        self._compile_summary = compile_summary

    @classmethod
    def load(cls, path: PathLike) -> "Plan":
        """Reads a plan file (binary or text, as aoa-run reads it) and
        verifies it; raises aoa.Error with its diagnostics."""
        return cls(_aoa.load_plan(os.fspath(path)))

    @property
    def ranks(self) -> int:
        """The number of ranks of the plan."""
        return self._handle.ranks

    @property
    def destination_files(self) -> List[Dict[str, Any]]:
        """Every destination file: ``{"path": ..., "rank": ...}``."""
        return [{"path": p, "rank": r} for p, r in self._handle.destination_files()]

    def summary(self) -> str:
        """The cost summary (bytes read, sent, received and written and peak
        buffer memory per rank), as ``aoa-plan summary`` prints it."""
        return self._handle.summary()

    def text(self) -> str:
        """The plan's text form (docs/plan-format.md), as ``aoa-plan dump``
        prints it."""
        return self._handle.text()

    def save(self, path: PathLike) -> None:
        """Writes the plan as aoa-compile does (its binary form for a
        compiled plan), atomically; ``aoa-run`` and :meth:`load` read it."""
        self._handle.save(os.fspath(path))

    def mappings(self, queries: Union[PathLike, Sequence[Mapping[str, Any]], None] = None
                 ) -> List[Dict[str, Any]]:
        """Paddle's ``find_shard_sources`` answers, as ``aoa-compile
        --emit=mappings`` gives them (a list of dicts): for every destination
        shard (of ``dst``; without it, of every output key whole), or for
        each target of ``queries`` (a queries file, or a list of
        ShardedWeightDesc dicts: key, global_offset, local_shape,
        global_shape, dtype). ``layout`` and ``to_hf`` place a plan's files
        and do not change the answers. Only for a plan made by
        :func:`compile`."""
        if self._compiled_from is None:
            raise Error("mappings are answered by the compiler: this plan was "
                        "loaded from a file\nhint: make the plan with aoa.compile")
        args = self._compiled_from
        with _Inputs() as inputs:
            text = _aoa.compile_text(
                config=inputs.config(args["config"]),
                source=inputs.metadata(args["src"], "src.json"),
                destination=inputs.metadata(args["dst"], "dst.json"),
                layout="", to_hf=False, max_shard_size=args["max_shard_size"],
                reverse=args["reverse"], memory_budget=args["memory_budget"],
                emit="mappings", queries=inputs.queries(queries))
        answer = json.loads(text)
        return answer if isinstance(answer, list) else [answer]

    def __repr__(self) -> str:
        return f"<aoa.Plan {self._handle.name!r}: {self.ranks} ranks>"


def compile(config: Config, src: Metadata, dst: Metadata = None,
            reverse: bool = False, memory_budget: Optional[int] = None, *,
            layout: Metadata = None, to_hf: bool = False,
            max_shard_size: int = 5_000_000_000,
            shared_src: bool = False) -> Plan:
    """Compiles a plan, as ``aoa-compile CONFIG --src SRC [--dst DST |
    --layout SPEC | --to-hf] --emit=plan`` does.

    ``config`` is a path (Paddle JSON or ``.aoa``), a dict (Paddle's JSON
    config) or a list of statement strings; None: no statements (every key
    kept). ``src`` and ``dst`` are shard metadata files, checkpoint
    directories (aoa's, Hugging Face, plain safetensors; scanned) or
    aoa-metadata v1 dicts. Instead of ``dst``: ``layout`` (a layout spec path
    or dict) or ``to_hf`` (a Hugging Face directory of files of at most
    ``max_shard_size`` bytes). ``memory_budget``: buffer bytes per rank and
    round (default 1 GiB). ``shared_src`` (``--shared-src``): every rank sees
    every source file, so the rank that writes a piece reads it itself and
    nothing passes between ranks (not for ``aoa-run --node-local``). Raises
    aoa.Error with the compiler's diagnostics.
    """
    if memory_budget is None:
        memory_budget = 1 << 30
    args = dict(config=config, src=src, dst=dst, layout=layout, to_hf=to_hf,
                max_shard_size=int(max_shard_size), reverse=bool(reverse),
                memory_budget=int(memory_budget), shared_src=bool(shared_src))
    with _Inputs() as inputs:
        config_path = inputs.config(config)
        handle, summary = _aoa.compile(
            config=config_path,
            source=inputs.metadata(src, "src.json"),
            destination=inputs.metadata(dst, "dst.json"),
            layout=inputs.metadata(layout, "layout.json"),
            to_hf=to_hf, max_shard_size=args["max_shard_size"],
            reverse=args["reverse"], memory_budget=args["memory_budget"],
            shared_src=args["shared_src"], name=(config_path or "plan") + ".plan")
    return Plan(handle, args, summary)


def run(plan: Plan, src_dir: PathLike, dst_dir: PathLike,
        threads: Optional[int] = None, verify: bool = False,
        progress: bool = False, overwrite: bool = False) -> str:
    """Runs ``plan`` with the local backend, as ``aoa-run PLAN --src-dir
    SRC --dst-dir DST`` does (every check, atomic staging, resume, hashes,
    metadata.json). ``threads``: workers (default one per core); ``verify``:
    re-read every written tensor and check its hash; ``progress``: print
    progress lines to stderr. Returns aoa-run's summary text. Ctrl-C stops
    the run between rounds (KeyboardInterrupt): the destination then holds
    no new checkpoint, and the same call resumes from the finished files.
    """
    return _aoa.run(plan._handle, os.fspath(src_dir), os.fspath(dst_dir),
                    int(threads or 0), bool(verify), bool(overwrite),
                    bool(progress))


class LoadedTensors(dict):
    """One rank's destination tensors: ``name -> numpy.ndarray`` (bfloat16
    and FP8 tensors as their raw uint16 / uint8 bits), with ``dtypes`` (name
    -> aoa dtype name) and ``files`` (name -> the destination file that
    would hold it)."""

    dtypes: Dict[str, str]
    files: Dict[str, str]

    def __init__(self) -> None:
        super().__init__()
        self.dtypes = {}
        self.files = {}


def load(plan: Plan, rank: int, src_dir: PathLike,
         threads: Optional[int] = None) -> LoadedTensors:
    """Loads destination rank ``rank``'s tensors into new numpy arrays,
    without writing files: reads only the source bytes they need (other
    ranks' reads too, for what ``rank`` receives from them), applies the
    transforms, and returns the tensors its files would hold, byte for byte.
    """
    import numpy

    tensors = LoadedTensors()
    buffers = {}
    for file, name, dtype, shape, _ in plan._handle.rank_tensors(int(rank)):
        if name in tensors:
            raise Error(f"tensor '{name}' is in two of rank {rank}'s files "
                        f"('{tensors.files[name]}' and '{file}')\nhint: read "
                        "such a rank with aoa.run")
        array = numpy.empty(shape, dtype=numpy_dtype(dtype))
        tensors[name] = array
        tensors.dtypes[name] = dtype
        tensors.files[name] = file
        buffers[name] = array
    _aoa.load_into(plan._handle, int(rank), os.fspath(src_dir), buffers,
                   int(threads or 0))
    return tensors


def load_into(plan: Plan, rank: int, src_dir: PathLike,
              buffers: Mapping[str, Any], threads: Optional[int] = None
              ) -> Dict[str, Any]:
    """Like :func:`load`, into memory the caller owns: ``buffers`` maps
    every tensor name of the rank's files to a writable, C-contiguous buffer
    (a numpy array, a bytearray, ...) of exactly the tensor's size in bytes.
    A missing, unknown or wrongly sized tensor raises aoa.Error naming it
    (with the expected and given bytes) before anything is written. Returns
    counts: bytes read, exchanged and written, seconds."""
    return _aoa.load_into(plan._handle, int(rank), os.fspath(src_dir),
                          dict(buffers), int(threads or 0))


def rank_tensors(plan: Plan, rank: int) -> List[Dict[str, Any]]:
    """What ``load`` returns for ``rank``, without loading it: for each
    tensor its ``file``, ``name``, aoa ``dtype``, ``shape`` and ``bytes``."""
    return [dict(file=f, name=n, dtype=d, shape=tuple(s), bytes=b)
            for f, n, d, s, b in plan._handle.rank_tensors(int(rank))]


def scan(directory: PathLike) -> Dict[str, Any]:
    """The shard metadata of a checkpoint directory (aoa's output, a Hugging
    Face directory or plain safetensors; headers only), as ``aoa-scan DIR``
    writes it: an aoa-metadata v1 dict."""
    return json.loads(_aoa.scan(os.fspath(directory)))
