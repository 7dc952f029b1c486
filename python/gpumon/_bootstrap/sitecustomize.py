# SPDX-License-Identifier: MIT
"""Loaded at start-up by every Python that `gpumon record -- CMD` starts, the ranks of a launcher
included: `gpumon record` puts this folder first on PYTHONPATH and sets GPUMON_PYTHON_HOOKS=1
(`--no-python-hooks` does neither). It sets gpumon's zero-code hooks up (gpumon/_auto.py), then
runs the sitecustomize module this one hides, as Python would have. It never stops the
interpreter from starting: any failure is one line on stderr."""
import os
import sys


def _gpumon_install():
    if os.environ.get("GPUMON_PYTHON_HOOKS") != "1":
        return
    try:
        import gpumon._auto as auto  # an installed gpumon (pip install .)
    except ImportError:
        # The package this file belongs to (<dir>/gpumon/_bootstrap/sitecustomize.py), loaded
        # by its path: putting <dir> on sys.path would also expose its other folders.
        import importlib.util
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        spec = importlib.util.spec_from_file_location(
            "gpumon", os.path.join(package, "__init__.py"), submodule_search_locations=[package])
        module = importlib.util.module_from_spec(spec)
        sys.modules["gpumon"] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules["gpumon"]
            raise
        import gpumon._auto as auto
    auto.install()


def _run_hidden_sitecustomize():
    """The next sitecustomize on sys.path (Debian's /usr/lib/python3.X/sitecustomize.py)."""
    here = os.path.dirname(os.path.abspath(__file__))
    saved = list(sys.path)
    me = sys.modules.pop("sitecustomize", None)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
        import importlib
        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    finally:
        sys.path[:] = saved
        if me is not None and "sitecustomize" not in sys.modules:
            sys.modules["sitecustomize"] = me


try:
    _gpumon_install()
except Exception as e:  # never stop the interpreter from starting
    sys.stderr.write("gpumon: no step hooks in this process: %r\n" % (e,))
_run_hidden_sitecustomize()
