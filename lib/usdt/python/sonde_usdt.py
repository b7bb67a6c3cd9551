"""USDT probes defined at run time, for Python programs (libsonde-usdt).

    from sonde_usdt import Provider
    p = Provider("myapp")
    req = p.add_probe("request", int, str)
    p.load()
    req.fire(12, "/index.html")            # arguments as they are
    req.fire(lambda: (latency(), url))     # computed only while traced

Any USDT tracer attached to the process sees myapp:request, e.g.
``sonde -p PID -e 'usdt:*:myapp:request { @[str(arg1)] = hist(arg0); }'``.

Argument types: ``int`` (a signed 64-bit integer), ``str`` and ``bytes``
(a string, read with str()), or one of the names in TYPES ("int8" ...
"uint64", "pointer", "string"). A string argument is UTF-8 encoded; it is
cut at its first NUL byte, as C strings are.

The library is found through SONDE_USDT_LIB (a path), then as
libsonde-usdt.so by the dynamic linker, then next to this file's
installation prefix ($PREFIX/lib for $PREFIX/lib/python3/dist-packages).
Errors raise OSError with the library's errno and sentence. This module is
pure Python over ctypes and needs nothing else.
"""
import ctypes
import errno
import os

__all__ = ["Provider", "Probe", "TYPES"]

# Argument type names, in the order of enum sonde_usdt_type (usdt.h), with
# the ctypes type the probe site is called with.
TYPES = {
    "int8": (1, ctypes.c_int8), "uint8": (2, ctypes.c_uint8),
    "int16": (3, ctypes.c_int16), "uint16": (4, ctypes.c_uint16),
    "int32": (5, ctypes.c_int32), "uint32": (6, ctypes.c_uint32),
    "int64": (7, ctypes.c_int64), "uint64": (8, ctypes.c_uint64),
    "pointer": (9, ctypes.c_void_p), "string": (10, ctypes.c_char_p),
}
_PYTHON_TYPES = {int: "int64", str: "string", bytes: "string"}
_MAX_ARGS = 6


def _find_library():
    candidates = []
    if os.environ.get("SONDE_USDT_LIB"):
        candidates.append(os.environ["SONDE_USDT_LIB"])
    candidates.append("libsonde-usdt.so")
    here = os.path.dirname(os.path.abspath(__file__))
    candidates.append(os.path.join(here, "..", "..", "libsonde-usdt.so"))
    reasons = []
    for candidate in candidates:
        try:
            return ctypes.CDLL(candidate, use_errno=True)
        except OSError as error:
            reasons.append(str(error))
    raise OSError(errno.ENOENT, "cannot load libsonde-usdt.so (set SONDE_USDT_LIB): "
                  + "; ".join(reasons))


_lib = _find_library()
_lib.sonde_usdt_provider_new.restype = ctypes.c_void_p
_lib.sonde_usdt_provider_new.argtypes = [ctypes.c_char_p]
_lib.sonde_usdt_probe_add_types.restype = ctypes.c_void_p
_lib.sonde_usdt_probe_add_types.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                            ctypes.POINTER(ctypes.c_int), ctypes.c_int]
for _name in ("sonde_usdt_provider_load", "sonde_usdt_provider_unload"):
    getattr(_lib, _name).restype = ctypes.c_int
    getattr(_lib, _name).argtypes = [ctypes.c_void_p]
_lib.sonde_usdt_provider_free.restype = None
_lib.sonde_usdt_provider_free.argtypes = [ctypes.c_void_p]
_lib.sonde_usdt_provider_error.restype = ctypes.c_char_p
_lib.sonde_usdt_provider_error.argtypes = [ctypes.c_void_p]
_lib.sonde_usdt_probe_site.restype = ctypes.c_void_p
_lib.sonde_usdt_probe_site.argtypes = [ctypes.c_void_p]
_lib.sonde_usdt_probe_semaphore.restype = ctypes.c_void_p
_lib.sonde_usdt_probe_semaphore.argtypes = [ctypes.c_void_p]

# Stands for the semaphore of a probe that is not loaded: always 0.
_NOT_LOADED = ctypes.c_uint16(0)


def _type_name(kind):
    if isinstance(kind, str) and kind in TYPES:
        return kind
    if kind in _PYTHON_TYPES:
        return _PYTHON_TYPES[kind]
    raise TypeError("unknown USDT argument type %r: use int, str, bytes or one of %s"
                    % (kind, ", ".join(TYPES)))


class Probe:
    """One probe of a Provider; made by Provider.add_probe."""

    def __init__(self, provider, name, types, handle):
        self.provider = provider
        self.name = name
        self.types = tuple(types)
        self._handle = handle
        self._strings = [t == "string" for t in self.types]
        self._semaphore = _NOT_LOADED
        self._site = None

    def _bind(self):
        site = _lib.sonde_usdt_probe_site(self._handle)
        semaphore = _lib.sonde_usdt_probe_semaphore(self._handle)
        prototype = ctypes.CFUNCTYPE(None, *[TYPES[t][1] for t in self.types])
        self._site = prototype(site)
        self._semaphore = ctypes.c_uint16.from_address(semaphore)

    def _unbind(self):
        self._semaphore = _NOT_LOADED
        self._site = None

    @property
    def enabled(self):
        """Whether a tracer is attached to this probe (one memory read)."""
        return self._semaphore.value != 0

    def fire(self, *args):
        """Fires the probe if a tracer is attached. fire(a, b) passes the
        values; fire(f) with one callable calls f() for them (a tuple, or
        one value for a one-argument probe) only when the probe is enabled."""
        if not self._semaphore.value:
            return
        if len(args) == 1 and callable(args[0]):
            args = args[0]()
            if not isinstance(args, tuple):
                args = (args,)
        if len(args) != len(self.types):
            raise TypeError("probe %s:%s takes %d arguments, %d given"
                            % (self.provider.name, self.name, len(self.types), len(args)))
        if True in self._strings:
            args = [a.encode() if is_string and isinstance(a, str) else a
                    for a, is_string in zip(args, self._strings)]
        site = self._site
        if site is not None:
            site(*args)

    def __repr__(self):
        return "<sonde_usdt.Probe %s:%s(%s)>" % (self.provider.name, self.name,
                                                 ", ".join(self.types))


class Provider:
    """A USDT provider: add probes, load() it, fire them; unload() or leave
    a `with` block to unmap it. Raises OSError(errno, sentence) on errors."""

    def __init__(self, name):
        self.name = name
        self.probes = {}
        self._handle = _lib.sonde_usdt_provider_new(name.encode())
        if not self._handle:
            number = ctypes.get_errno() or errno.EINVAL
            raise OSError(number, "cannot create USDT provider %r: %s"
                          % (name, os.strerror(number)))
        self._loaded = False

    def _error(self, number):
        return OSError(number, _lib.sonde_usdt_provider_error(self._handle).decode())

    def add_probe(self, name, *types):
        """Adds a probe with up to six arguments of the given types."""
        names = [_type_name(t) for t in types]
        if not self._handle:
            raise OSError(errno.EINVAL, "provider %s was freed" % self.name)
        codes = (ctypes.c_int * max(len(names), 1))(*[TYPES[t][0] for t in names])
        handle = _lib.sonde_usdt_probe_add_types(self._handle, name.encode(), codes, len(names))
        if not handle:
            sentence = _lib.sonde_usdt_provider_error(self._handle).decode()
            number = ctypes.get_errno() or errno.EINVAL
            raise OSError(number, sentence)
        probe = Probe(self, name, names, handle)
        self.probes[name] = probe
        return probe

    def load(self):
        """Builds and maps the provider's object; its probes can then fire."""
        result = _lib.sonde_usdt_provider_load(self._handle)
        if result < 0:
            raise self._error(-result)
        self._loaded = True
        for probe in self.probes.values():
            probe._bind()
        return self

    def unload(self):
        """Unmaps the object; its probes stop firing until load() again."""
        if not self._loaded:
            return
        for probe in self.probes.values():
            probe._unbind()
        self._loaded = False
        result = _lib.sonde_usdt_provider_unload(self._handle)
        if result < 0:
            raise self._error(-result)

    def close(self):
        """Unloads and frees the provider; it cannot be used afterwards."""
        if self._handle:
            for probe in self.probes.values():
                probe._unbind()
            self._loaded = False
            _lib.sonde_usdt_provider_free(self._handle)
            self._handle = None

    @property
    def loaded(self):
        return self._loaded

    def __enter__(self):
        if not self._loaded:
            self.load()
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        if getattr(self, "_handle", None):
            self.close()
