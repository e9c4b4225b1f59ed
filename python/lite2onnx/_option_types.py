"""The keyword options of convert(), convert_many() and Client.convert(), typed.

Generated from the converter's option table (core/option_table.h) and limits by
``python -m lite2onnx._stubgen``; do not edit (a test checks it is current).
"""

from __future__ import annotations

from typing import Literal, Mapping, Sequence, Tuple, TypedDict, Union

# {tensor: (source, target)} or {tensor: "NHWC"} (an I/O order), or "TENSOR=SRC:DST" texts.
LayoutsValue = Union[Mapping[str, Union[str, Tuple[str, str]]], str, Sequence[str]]
# {tensor: (1, 224, 224, 3)}, or "TENSOR=D0,D1,..." texts.
ShapesValue = Union[Mapping[str, Sequence[int]], str, Sequence[str]]


class ConvertOptions(TypedDict, total=False):
    """Every keyword option; leave one out for its default."""

    opset: int
    """ONNX opset, 13..17 (--opset; default '13')"""
    explicit_layouts: LayoutsValue
    """TENSOR=SRC:DST, e.g. input=NHWC:NCHW (repeatable): the layout a tensor takes in
    ONNX, seeding layout propagation (--explicit-layout)
    """
    io_layouts: LayoutsValue
    """TENSOR=ORDER or TENSOR=SRC:DST (repeatable): axis order of a graph input/output in
    ONNX, e.g. input=NHWC keeps the TFLite order (--io-layout)
    """
    keep_io_layout: bool
    """keep the TFLite axis order for every graph input and output (--keep-io-layout;
    default 'false')
    """
    quantization: Literal['qdq', 'dequantize', 'exact', 'auto']
    """auto (default): int8/uint8 quantization kept, as QuantizeLinear/DequantizeLinear
    around convolutions and fully connected layers (ONNX Runtime's integer kernels
    compute what TFLite's do) and as TFLite's integer arithmetic for the ops whose Q/DQ
    kernels round differently (add, mul, requantize, pooling, means, activation tables,
    resize); qdq: every quantized op as QuantizeLinear/DequantizeLinear, the portable
    form execution providers fuse (ONNX Runtime's CPU kernels then approximate TFLite's
    rounding); dequantize: a pure float32 model (weights folded to float, no Q/DQ);
    exact: integer arithmetic that computes what TFLite's kernels compute, bit for bit
    (ops without an integer form yet fail, named) (--quantization; default 'auto')
    """
    keep_float16_weights: bool
    """keep float16 weights as float16 initializers with a Cast to float32 (default: widen
    them to float32) (--keep-float16-weights; default 'false')
    """
    keep_int8_activations: bool
    """keep int8 activations int8 inside the graph (default: uint8 with zero point + 128,
    the same values, which ONNX Runtime's x86 integer kernels take; graph inputs and
    outputs stay int8 either way) (--keep-int8-activations; default 'false')
    """
    no_metadata: bool
    """leave the TFLite Metadata (model name, author, license, normalization, value ranges,
    label files) out of the ONNX metadata_props; provenance stays (--no-metadata;
    default 'false')
    """
    signature: str
    """the key of the model's SignatureDef whose subgraph to convert (default: its first
    signature, or subgraph 0 when it has none) (--signature)
    """
    io_names: Literal['tensor', 'signature']
    """tensor: name the ONNX graph inputs and outputs after their TFLite tensors;
    signature: after the converted signature's aliases (--io-names; default 'tensor')
    """
    input_shapes: ShapesValue
    """TENSOR=D0,D1,... e.g. input=1,224,224,3 (repeatable): fix the dynamic (-1)
    dimensions of a graph input before shape inference, so the ONNX model gets static
    shapes and folded shape arithmetic (a static dimension may only be given its own
    value) (--input-shape)
    """
    batch: int
    """fix the first dimension of every graph input whose first dimension is dynamic to N
    (inputs named by --input-shape keep theirs; 0: leave it) (--batch; default '0')
    """
    rename_inputs: str
    """NAME,NAME,...: new names of the graph inputs, in their order (those beyond the list
    keep theirs; layout options and --input-shape take either name) (--rename-inputs)
    """
    rename_outputs: str
    """NAME,NAME,...: new names of the graph outputs, in their order (--rename-outputs)"""
    max_operators: int
    """operators of the subgraph converted (--max-operators; default 30000)"""
    max_tensors: int
    """tensors of the subgraph converted (--max-tensors; default 200000)"""
    max_inputs_per_op: int
    """inputs of one operator (--max-inputs-per-op; default 65536)"""
    max_created_bytes: int
    """bytes of constants one conversion may create (0: 256 MiB + 4 x the model) (--max-
    created-bytes; default 0)
    """
    max_output_bytes: int
    """bytes of the ONNX model (0: 512 MiB + 8 x the model, at most 2 GiB - 1) (--max-
    output-bytes; default 0)
    """
