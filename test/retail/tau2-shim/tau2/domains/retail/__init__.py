"""The retail domain: the reference files (tools.py, data_model.py) are loaded from the reference folder."""

import os


def reference_dir() -> str:
    env = os.environ.get("TAU2_RETAIL_DIR")
    if env:
        return os.path.join(os.path.abspath(env), "reference")
    # test/tau2-shim/tau2/domains/retail -> repository root -> ../shared/tau2-retail
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), *[".."] * 5))
    return os.path.join(os.path.dirname(root), "shared", "tau2-retail", "reference")


__path__.append(reference_dir())  # noqa: F821 (the package's own __path__)
