# SPDX-License-Identifier: Apache-2.0
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
cut at its first NUL byte, as C strings are. A value its argument cannot
carry raises OverflowError (an integer out of the type's range) or
TypeError (not an integer, or for a string not str or bytes), naming the
argument; these are checked when the probe fires, i.e. while traced. A
name that is not str raises TypeError, one with a NUL ValueError.

Threads: fire() and enabled from any thread, also while another thread
unloads or closes the provider (those firings are waited for or see the
probe disabled). Adding probes, load, unload and close must not race with
one another.

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
# the ctypes type sonde_usdt_fire's va_arg reads and the range of integers
# each carries (None for a string).
TYPES = {
    "int8": (1, ctypes.c_int, (-2**7, 2**7)),
    "uint8": (2, ctypes.c_uint, (0, 2**8)),
    "int16": (3, ctypes.c_int, (-2**15, 2**15)),
    "uint16": (4, ctypes.c_uint, (0, 2**16)),
    "int32": (5, ctypes.c_int, (-2**31, 2**31)),
    "uint32": (6, ctypes.c_uint, (0, 2**32)),
    "int64": (7, ctypes.c_int64, (-2**63, 2**63)),
    "uint64": (8, ctypes.c_uint64, (0, 2**64)),
    "pointer": (9, ctypes.c_void_p, (0, 2**64)),
    "string": (10, ctypes.c_char_p, None),
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
_lib.sonde_usdt_probe_semaphore.restype = ctypes.c_void_p
_lib.sonde_usdt_probe_semaphore.argtypes = [ctypes.c_void_p]

# Stands for the semaphore of a probe that is not loaded: always 0.
_NOT_LOADED = ctypes.c_uint16(0)


def _name_bytes(what, name):
    """A provider's or probe's name for C: a str without NUL (which C would
    take for its end, silently naming something else)."""
    if not isinstance(name, str):
        raise TypeError("%s name must be str, not %s" % (what, type(name).__name__))
    if "\x00" in name:
        raise ValueError("%s name %r contains a NUL character" % (what, name))
    return name.encode()


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
        self._semaphore = _NOT_LOADED
        # sonde_usdt_fire with this probe's arguments, as ctypes calls a
        # variadic function: each argument's type given (x86-64 passes them
        # as for any call; libffi also sets %al, which a variadic callee
        # reads). It counts the firing, so that unload waits for it.
        self._fire = _lib._FuncPtr(("sonde_usdt_fire", _lib))
        self._fire.restype = ctypes.c_int
        self._fire.argtypes = [ctypes.c_void_p] + [TYPES[t][1] for t in self.types]
        self._limits = [(i, t, TYPES[t][2]) for i, t in enumerate(self.types)]
        self._strings = "string" in self.types

    def _bind(self):
        # readable until the C provider is freed, which waits for this
        # object to be unreachable (Provider.__del__), as 0 once unloaded
        semaphore = _lib.sonde_usdt_probe_semaphore(self._handle)
        self._semaphore = ctypes.c_uint16.from_address(semaphore)

    def _unbind(self):
        self._semaphore = _NOT_LOADED

    @property
    def enabled(self):
        """Whether a tracer is attached to this probe (one memory read)."""
        return self._semaphore.value != 0

    def _values(self, args):
        """The arguments for sonde_usdt_fire, after checking that each fits
        its type (ctypes would cut an integer to its width silently)."""
        values = list(args) if self._strings else args
        for i, kind, limits in self._limits:
            value = values[i]
            if limits is None:
                if isinstance(value, str):
                    values[i] = value.encode()
                elif not isinstance(value, bytes):
                    raise TypeError("argument %d of probe %s:%s (string) must be str or "
                                    "bytes, not %s" % (i, self.provider.name, self.name,
                                                       type(value).__name__))
                continue
            if value is None and kind == "pointer":
                continue
            if not isinstance(value, int):
                raise TypeError("argument %d of probe %s:%s (%s) must be an integer, not %s"
                                % (i, self.provider.name, self.name, kind,
                                   type(value).__name__))
            if not limits[0] <= value < limits[1]:
                raise OverflowError("argument %d of probe %s:%s (%s) is out of range: %d"
                                    % (i, self.provider.name, self.name, kind, value))
        return values

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
        self._fire(self._handle, *self._values(args))

    def __repr__(self):
        return "<sonde_usdt.Probe %s:%s(%s)>" % (self.provider.name, self.name,
                                                 ", ".join(self.types))


class Provider:
    """A USDT provider: add probes, load() it, fire them; unload() or leave
    a `with` block to unmap it. Raises OSError(errno, sentence) on errors."""

    def __init__(self, name):
        encoded = _name_bytes("provider", name)
        self.name = name
        self.probes = {}
        self._closed = False
        self._handle = _lib.sonde_usdt_provider_new(encoded)
        if not self._handle:
            number = ctypes.get_errno() or errno.EINVAL
            raise OSError(number, "cannot create USDT provider %r: %s"
                          % (name, os.strerror(number)))
        self._loaded = False

    def _error(self, number):
        return OSError(number, _lib.sonde_usdt_provider_error(self._handle).decode())

    def add_probe(self, name, *types):
        """Adds a probe with up to six arguments of the given types."""
        encoded = _name_bytes("probe", name)
        names = [_type_name(t) for t in types]
        if self._closed:
            raise OSError(errno.EINVAL, "provider %s was closed" % self.name)
        codes = (ctypes.c_int * max(len(names), 1))(*[TYPES[t][0] for t in names])
        handle = _lib.sonde_usdt_probe_add_types(self._handle, encoded, codes, len(names))
        if not handle:
            sentence = _lib.sonde_usdt_provider_error(self._handle).decode()
            number = ctypes.get_errno() or errno.EINVAL
            raise OSError(number, sentence)
        probe = Probe(self, name, names, handle)
        self.probes[name] = probe
        return probe

    def load(self):
        """Builds and maps the provider's object; its probes can then fire."""
        if self._closed:
            raise OSError(errno.EINVAL, "provider %s was closed" % self.name)
        result = _lib.sonde_usdt_provider_load(self._handle)
        if result < 0:
            raise self._error(-result)
        self._loaded = True
        for probe in self.probes.values():
            probe._bind()
        return self

    def unload(self):
        """Unmaps the object; its probes stop firing until load() again.
        Waits for firings already in progress in other threads."""
        if not self._loaded:
            return
        self._loaded = False
        result = _lib.sonde_usdt_provider_unload(self._handle)
        for probe in self.probes.values():
            probe._unbind()
        if result < 0:
            raise self._error(-result)

    def close(self):
        """Unloads the provider for good; it cannot be loaded again. Other
        threads may still call its probes' fire(), which does nothing. The
        C side is freed once no probe of it is reachable any more: a thread
        in fire() holds the probe, and freeing under it would crash."""
        if not self._closed:
            self._closed = True
            self.unload()

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
        # Probes refer to their provider, so this runs only when none of
        # them can be fired any more.
        if getattr(self, "_handle", None):
            _lib.sonde_usdt_provider_free(self._handle)
            self._handle = None
