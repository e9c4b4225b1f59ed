"""lite2onnx: convert TensorFlow Lite models to ONNX.

In this process (the C++ conversion core, through an extension module)::

    import lite2onnx
    result = lite2onnx.convert("model.tflite", "model.onnx", opset=17)
    result.diagnostics["transposes"]
    lite2onnx.convert_many(["models/"], "out", jobs=4)

or on a lite2onnx-server::

    with lite2onnx.Client("127.0.0.1:50051", deadline=60) as client:
        client.convert("model.tflite", "model.onnx")

Keyword options come from the converter's option table (``lite2onnx.options()``;
typed as ``lite2onnx.ConvertOptions``); failures are ``ConversionError``
subclasses named after the error-reason table. ``import lite2onnx as
tflite2onnx`` keeps a tflite2onnx script working: ``convert(tflite_path,
onnx_path, explicit_layouts=...)`` and ``getSupportedOperators()``.
"""

from . import _core
from ._errors import (ConversionError, DeadlineExceeded, FileError, InternalError,
                      InvalidModelError, InvalidOptionError, Overloaded, ResourceLimitError,
                      Unavailable, UnsupportedOperator, UnsupportedOperatorsError, error_class,
                      reasons)
from ._local import Conversion, convert, convert_many, getSupportedOperators, inspect, operators
from ._option_types import ConvertOptions
from ._options import Option, options
from .client import TLS, Client

__version__: str = _core.version()

__all__ = [
    "Client", "Conversion", "ConversionError", "ConvertOptions", "DeadlineExceeded", "FileError", "InternalError",
    "InvalidModelError", "InvalidOptionError", "Option", "Overloaded", "ResourceLimitError",
    "TLS", "Unavailable", "UnsupportedOperator", "UnsupportedOperatorsError", "convert",
    "convert_many", "error_class", "getSupportedOperators", "inspect", "operators", "options",
    "reasons", "__version__",
]
