// The rows of the arithmetic table (docs/quantization-arithmetic.md): which
// cases make up each row, and the reference arithmetic (a candidate name of
// the cases' `refs`) the table says each runtime computes there. A case belongs
// to the first row whose pattern matches its name.
//
// An expectation is a candidate name (it must match every element of every
// case of the row), a list of names (each case is matched entirely by one of
// them: rows whose cases mix ops with different builtin kernels), 'fails'
// (the runtime refuses every case of the row), or null (no arithmetic is
// claimed: tfjs-tflite's per-channel hybrid FULLY_CONNECTED returns garbage).

export const GROUPS = [
  { label: 'ADD/SUB int8,uint8 (XNNPACK)', match: /^(add|sub)_u?int8_(pot|rand|near|big|bcast|relu)/, lite: 'xnnpack', tfjs: 'xnnpack' },
  { label: 'ADD/SUB int8,uint8, scales XNNPACK refuses', match: /^(add|sub)_u?int8_xnn_refused/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'ADD/SUB int16 general scales', match: /^(add|sub)_int16_(pot|rand)$/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'ADD/SUB int16 pot_scale_int16', match: /^(add|sub)_int16_pot_flag/, lite: 'tflitePot16', tfjs: 'tflitePot16' },
  { label: 'MUL int8,uint8 (XNNPACK)', match: /^mul_u?int8_(pot|rand|near|big|bcast|relu)/, lite: 'xnnpack', tfjs: 'xnnpack' },
  { label: 'MUL int8,uint8, scales XNNPACK refuses', match: /^mul_u?int8_xnn_refused/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'MUL int8,uint8, multiplier shift >= 32 (TFLite shifts by it mod 32)', match: /^mul_u?int8_shift_ge32/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'MUL int16', match: /^mul_int16/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'CONV/DW/FC/TCONV int8, static weights, per-tensor', match: /_i8_pertensor_(relu|ties)$/, lite: 'xnnpack', tfjs: 'xnnpack' },
  {
    label: 'fused RELU6 bound on a tie (6/s_out = 0.5, zo even)', match: /_i8_relu6_tie$/, lite: 'xnnpack',
    // tfjs: each op's builtin kernel (conv: ruy single rounding; depthwise, FC:
    // double rounding; transpose conv: no activation)
    tfjs: ['tfliteSingle', 'tflite', 'tfliteNoAct'],
  },
  { label: 'CONV_2D int8 per-channel, static', match: /^conv(_s2d2_valid)?_i8_(ties|random|extreme_acc|relu6)$/, lite: 'xnnpack', tfjs: 'xnnpack' },
  { label: 'DEPTHWISE int8 per-channel, static', match: /^dw(_m2_s2)?_i8_(ties|random|relu6)$/, lite: 'xnnpack', tfjs: 'xnnpack' },
  { label: 'FULLY_CONNECTED int8 per-channel, static', match: /^fc(_keepdims)?_i8_(ties|random|extreme_acc|relu6)$/, lite: 'xnnpack', tfjs: 'tfliteSingle' },
  { label: 'TRANSPOSE_CONV int8 per-channel, static, no activation', match: /^tconv(_valid)?_i8_(ties|random)$/, lite: 'xnnpack', tfjs: 'tflite' },
  { label: 'TRANSPOSE_CONV int8 per-channel, static, fused RELU6', match: /^tconv(_valid)?_i8_relu6$/, lite: 'xnnpack', tfjs: 'tfliteNoAct' },
  { label: 'FC int8, acc around ties > 2^24', match: /^fc_i8_acc_f32_rounding$/, lite: 'xnnpack', tfjs: 'xnnpack' },
  { label: 'CONV/DW/FC/TCONV uint8, static', match: /_u8_(random|ties|ends_relu6)$/, lite: 'xnnpack', tfjs: 'xnnpack' },
  // XNNPACK cannot create the operator: its delegate fails as a whole, LiteRT.js
  // refuses the model and tfjs-tflite runs every node with its builtin kernel
  // (every nonzero sum saturates here, so any candidate matches).
  { label: 'CONV/DW/FC/TCONV int8, requantization scale >= 256', match: /_i8_requant_ge256$/, lite: 'fails', tfjs: ['tfliteSingle', 'tflite', 'tfliteNoAct'] },
  { label: 'CONV_2D int8, weights not constant (builtin)', match: /^conv(_s2d2_valid)?_i8_dynw/, lite: 'tfliteSingle', tfjs: 'tfliteSingle' },
  { label: 'DEPTHWISE int8, weights not constant (builtin)', match: /^dw(_m2_s2)?_i8_dynw/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'FULLY_CONNECTED int8, weights not constant (builtin; per-channel or per-tensor)', match: /^fc(_keepdims)?_i8_(pt_)?dynw/, lite: 'tfliteSingle', tfjs: 'tfliteSingle' },
  { label: 'TRANSPOSE_CONV int8, weights not constant (builtin)', match: /^tconv(_valid)?_i8_dynw_ties/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'TRANSPOSE_CONV int8, weights not constant, fused RELU', match: /^tconv(_valid)?_i8_dynw_random/, lite: 'tflite', tfjs: 'tfliteNoAct' },
  { label: 'CONV/DW/FC/TCONV uint8, weights not constant (builtin)', match: /_u8_dynw_/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'CONV/DW/TCONV 16x8', match: /^(conv|dw|tconv)[a-z0-9_]*_i16_/, lite: 'tflite16x8', tfjs: 'tflite16x8' },
  { label: 'FULLY_CONNECTED 16x8', match: /^fc(_keepdims)?_i16_/, lite: 'tfliteDouble', tfjs: 'tflite16x8' },
  { label: 'BATCH_MATMUL int8 (rhs zp 0)', match: /^bmm_i8_(ties|random|constb|rank2b)/, lite: 'xnnpack', tfjs: 'tfliteSingle' },
  { label: 'BATCH_MATMUL int8, constant per-channel rhs', match: /^bmm_i8_perchannel/, lite: 'legacyZeroScale', tfjs: 'legacyZeroScale' },
  { label: 'BATCH_MATMUL 16x8, constant per-channel rhs', match: /^bmm_i16x8_perchannel/, lite: 'legacyZeroScale', tfjs: 'fails' },
  { label: 'BATCH_MATMUL 16x8 (int16 x int8)', match: /^bmm_i16x8/, lite: 'tflite16x8F32Prod', tfjs: 'fails' },
  { label: 'BATCH_MATMUL int8, rhs zp != 0', match: /^bmm_i8_zb_/, lite: 'tfliteF32Prod', tfjs: 'tfliteSingle' },
  { label: 'BATCH_MATMUL int16', match: /^bmm_i16/, lite: 'tflite16x8F32Prod', tfjs: 'tflite16x8F32Prod' },
  { label: 'AVERAGE_POOL_2D', match: /^avgpool_/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'MAX_POOL_2D', match: /^maxpool_/, lite: 'max', tfjs: 'max' },
  { label: 'MEAN int8/uint8 over H,W (4-D, keep_dims or not)', match: /^mean_u?int8_(4d_hw|gap)/, lite: 'xnnpack', tfjs: 'xnnOldGavg' },
  { label: 'MEAN int8/uint8, other axes, in/out params equal', match: /^mean_u?int8_(last|n_c|h)_same/, lite: 'xnnpack', tfjs: 'oldMeanSame' },
  { label: 'MEAN int8/uint8, other axes, in/out params differ', match: /^mean_u?int8_((last|n_c|h)_diff|n2_)/, lite: 'xnnpack', tfjs: 'tfliteFloat' },
  { label: 'MEAN int16, in/out params equal', match: /^mean_int16_.*(same|ratio1)/, lite: 'tfliteRef', tfjs: 'oldMeanSame' },
  { label: 'MEAN int16, in/out params differ', match: /^mean_int16/, lite: 'tfliteRef', tfjs: 'tfliteFloat' },
  { label: 'SUM int8/uint8, in/out params equal', match: /^sum_u?int8_.*_same_/, lite: 'xnnpack', tfjs: 'oldSumWrap' },
  { label: 'SUM int8/uint8, in/out params differ', match: /^sum_u?int8/, lite: 'xnnpack', tfjs: 'oldSumFloatWrap' },
  { label: 'SUM int16, in/out params equal', match: /^sum_int16_.*_same_/, lite: 'tfliteFloat', tfjs: 'oldSumWrap' },
  { label: 'SUM int16, in/out params differ', match: /^sum_int16/, lite: 'tfliteFloat', tfjs: 'fails' },
  { label: 'REDUCE_MAX', match: /^reducemax/, lite: 'max', tfjs: 'max' },
  { label: 'LOGISTIC int8/uint8', match: /^(logistic|sweep_logistic|lutdisc_logistic)_u?int8/, lite: 'xnnpack', tfjs: 'xnnOld' },
  { label: 'TANH int8/uint8', match: /^(tanh|sweep_tanh|lutdisc_tanh)_u?int8/, lite: 'xnnpack', tfjs: 'tflite' },
  { label: 'ELU int8', match: /^(elu|sweep_elu)_int8/, lite: 'xnnpack', tfjs: 'xnnOld' },
  { label: 'LOGISTIC int16, input scale not 2^-12', match: /^logistic_int16_s(3\.70|9\.77|4\.88)/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'LOGISTIC int16, input scale 2^-12 (gemmlowp path)', match: /^logistic_int16/, lite: 'gemmlowp', tfjs: 'gemmlowp' },
  { label: 'TANH int16, input scale not 2^-12 / 2^-11', match: /^tanh_int16_s(3\.70|9\.77)/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'TANH int16, input scale 2^-12 (gemmlowp path, shift 0)', match: /^tanh_int16_s2\.44/, lite: 'gemmlowp', tfjs: 'gemmlowp' },
  { label: 'TANH int16, input scale 2^-11 (gemmlowp path, shift 1)', match: /^tanh_int16_s4\.88/, lite: 'gemmlowpShift1', tfjs: 'gemmlowpShift1' },
  { label: 'HARD_SWISH int8/uint8', match: /^hardswish_/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'LEAKY_RELU int8/uint8, XNNPACK refuses (abs(p*alpha) < 2^-8)', match: /^leakyrelu_.*_builtin/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'LEAKY_RELU int16', match: /^leakyrelu_int16/, lite: 'tfliteSigned', tfjs: 'tfliteSigned' },
  { label: 'LEAKY_RELU int8/uint8', match: /^leakyrelu_/, lite: 'xnnpack', tfjs: 'xnnpack' },
  { label: 'RELU/RELU6/RELU_N1_TO_1 requantizing', match: /^relu/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'QUANTIZE int8 -> int16', match: /^requantize_int8_to_int16/, lite: 'tflite', tfjs: 'fails' },
  { label: 'QUANTIZE int16 -> int32', match: /^requantize_int16_to_int32/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'QUANTIZE int16 -> int16, int16 -> int8', match: /^requantize_int16/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'QUANTIZE int8->int8, uint8->uint8', match: /^requantize_u?int8_/, lite: 'xnnpack', tfjs: 'xnnpack' },
  { label: 'QUANTIZE int8<->uint8', match: /^quantize_u?int8_to_/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'QUANTIZE float32->int8/uint8', match: /^quantize_f32_to_u?int8$/, lite: 'xnnpack', tfjs: 'xnnpack' },
  { label: 'QUANTIZE float32->int16', match: /^quantize_f32_to_int16$/, lite: 'tfliteDouble', tfjs: 'tfliteDouble' },
  { label: 'DEQUANTIZE', match: /^dequantize_/, lite: 'both', tfjs: 'both' },
  { label: 'SOFTMAX int8/uint8 -> int16', match: /^softmax_to_int16_/, lite: 'tfliteFloatTable', tfjs: 'tfliteFloatTable' },
  { label: 'SOFTMAX int8/uint8', match: /^softmax_/, lite: 'tfliteFloatTable', tfjs: 'tfliteFloatTable' },
  { label: 'SVDF int8 (int16 state)', match: /^svdf_i8_/, lite: 'fails', tfjs: 'tflite' },
  { label: 'L2_NORMALIZATION int8', match: /^l2norm_/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'RSQRT int8', match: /^rsqrt_/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'SQUARED_DIFFERENCE int8', match: /^sqdiff_/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'PRELU int8/uint8', match: /^prelu_/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'CONCATENATION int8, input scales differ', match: /^concat_int8/, lite: 'fails', tfjs: 'fails' },
  { label: 'CONCATENATION uint8, input scales differ', match: /^concat_uint8/, lite: 'tfliteScaling', tfjs: 'copy' },
  { label: 'CONCATENATION int16, input scales differ', match: /^concat_int16/, lite: 'copy', tfjs: 'copy' },
  { label: 'PAD int8/uint8, output params differ', match: /^pad_u?int8/, lite: 'fails', tfjs: 'copyPadOutZp' },
  { label: 'PAD int16, output params differ', match: /^pad_/, lite: 'copyPadOutZp', tfjs: 'copyPadOutZp' },
  { label: 'RESHAPE, output params differ', match: /^reshape_/, lite: 'copy', tfjs: 'copy' },
  { label: 'TRANSPOSE/SPLIT int8/uint8, output params differ', match: /^(transpose|split)_u?int8/, lite: 'fails', tfjs: 'copy' },
  { label: 'TRANSPOSE/SPLIT int16, output params differ', match: /^(transpose|split)_int16/, lite: 'copy', tfjs: 'copy' },
  { label: 'RESIZE_BILINEAR int8/uint8', match: /^bilinear_u?int8/, lite: 'xnnpack', tfjs: 'xnnpack' },
  { label: 'RESIZE_BILINEAR int16', match: /^bilinear_int16/, lite: 'tfliteInteger', tfjs: 'tfliteInteger' },
  { label: 'RESIZE_NEAREST_NEIGHBOR', match: /^nearest_/, lite: 'tflite', tfjs: 'tflite' },
  { label: 'hybrid FULLY_CONNECTED per-tensor, symmetric', match: /^hybrid_fc_pt_sym/, lite: 'xnnpackQd8', tfjs: 'tfliteSym' },
  { label: 'hybrid FULLY_CONNECTED per-tensor, asymmetric', match: /^hybrid_fc_pt_asym/, lite: 'xnnpackQd8', tfjs: 'tfliteAsym' },
  { label: 'hybrid FULLY_CONNECTED per-channel', match: /^hybrid_fc_pc/, lite: 'xnnpackQd8', tfjs: null },
  { label: 'hybrid CONV_2D per-tensor', match: /^hybrid_conv_pt/, lite: 'xnnpackQd8', tfjs: 'tfliteSym' },
  { label: 'hybrid CONV_2D per-channel', match: /^hybrid_conv_pc/, lite: 'xnnpackQd8', tfjs: 'tfliteAsym' },
  // XNNPACK defines a 1x1 stride-1 convolution as a fully connected layer: per-pixel rows.
  { label: 'hybrid CONV_2D pointwise (1x1, stride 1) per-tensor', match: /^hybrid_conv1x1_pt/, lite: 'xnnpackQd8PerPixel', tfjs: 'tfliteSym' },
  { label: 'hybrid CONV_2D pointwise (1x1, stride 1) per-channel', match: /^hybrid_conv1x1_pc/, lite: 'xnnpackQd8PerPixel', tfjs: 'tfliteAsym' },
  { label: 'hybrid FULLY_CONNECTED uint8 weights (TOCO)', match: /^hybrid_fc_u8/, lite: 'tfliteSym', tfjs: 'tfliteSym' },
  { label: 'hybrid CONV_2D uint8 weights (TOCO)', match: /^hybrid_conv_u8/, lite: 'tfliteSym', tfjs: 'tfliteSym' },
  { label: 'hybrid DEPTHWISE_CONV_2D (per-channel)', match: /^hybrid_dw/, lite: 'tfliteAsym', tfjs: 'tfliteAsym' },
];

/** The row of a case name (null: no row). */
export function groupOf(name) {
  return GROUPS.find((g) => g.match.test(name)) ?? null;
}

// A case result (lib/runner.mjs) on one runtime: 'fails' when that runtime
// refused it, else the candidates matching every element.
function outcome(r, side) {
  if (side === 'lite' ? r.liteError : r.tfjsError) return 'fails';
  if (!r.n) return 'fails';
  return Object.entries(r.refs ?? {}).filter(([, x]) => x[side] === r.n).map(([k]) => k);
}

/**
 * Checks one case result against its row's expectations. Returns a list of
 * problems (empty: the table holds for this case).
 */
export function checkCase(r) {
  const g = groupOf(r.name);
  if (!g) return [`${r.name}: in no row of the table`];
  const problems = [];
  for (const [side, label] of [['lite', 'LiteRT.js'], ['tfjs', 'tfjs-tflite']]) {
    const want = g[side];
    if (want === null) continue;
    const got = outcome(r, side);
    if (want === 'fails') {
      if (got !== 'fails') problems.push(`${r.name}: ${label} was expected to refuse it but ran it`);
      continue;
    }
    if (got === 'fails') {
      const why = (side === 'lite' ? r.liteError : r.tfjsError) ?? 'no output';
      problems.push(`${r.name}: ${label} failed: ${why.slice(0, 160)}`);
      continue;
    }
    const names = Array.isArray(want) ? want : [want];
    if (!names.some((n) => got.includes(n))) {
      const ref = r.refs?.[names[0]];
      const count = ref ? `${ref[side]}/${r.n} elements` : 'no such candidate';
      problems.push(`${r.name}: ${label} no longer matches ${names.join(' or ')} (${count}; matching: ${got.join(' ') || 'none'})`);
    }
  }
  return problems;
}

// Per row: cases, elements, the tfjs-tflite kernels seen, the runtimes'
// agreement, and the candidates matching every element of every case, per
// runtime (the intersection over the row's cases).
export function groupRows(results) {
  const inter = (sets) => (sets.length ? sets.reduce((a, b) => a.filter((x) => b.includes(x))) : []);
  return GROUPS.map((g) => {
    const cs = results.filter((r) => groupOf(r.name) === g);
    const ran = cs.filter((r) => r.n > 0);
    const matching = (side) => {
      const ok = ran.filter((r) => outcome(r, side) !== 'fails');
      return ok.length ? inter(ok.map((r) => outcome(r, side))).join(' ') || '(none common)' : '-';
    };
    const withBoth = ran.filter((r) => r.runtimesAgree !== undefined);
    return {
      label: g.label,
      cases: cs.length,
      elements: ran.reduce((a, r) => a + r.n, 0),
      kernels: [...new Set(ran.flatMap((r) => r.tfjsNodes ?? []))].join(',').replaceAll('TfLiteXNNPackDelegate', 'XNNPACK'),
      agree: `${withBoth.reduce((a, r) => a + r.runtimesAgree, 0)}/${withBoth.reduce((a, r) => a + r.n, 0)}`,
      lite: matching('lite'),
      tfjs: matching('tfjs'),
      liteErrors: cs.filter((r) => r.liteError).length,
      tfjsErrors: cs.filter((r) => r.tfjsError).length,
    };
  }).filter((row) => row.cases > 0);
}

export function formatRows(rows, { markdown = false } = {}) {
  const lines = [];
  if (markdown) {
    lines.push('| row | cases | elements | tfjs kernel | runtimes agree | LiteRT.js matches (all elements) | tfjs-tflite matches (all elements) |');
    lines.push('|---|---|---|---|---|---|---|');
    for (const r of rows) {
      lines.push(`| ${r.label} | ${r.cases} | ${r.elements} | ${r.kernels} | ${r.agree} | ${r.lite}${r.liteErrors ? ` (${r.liteErrors} fail)` : ''} | ` +
        `${r.tfjs}${r.tfjsErrors ? ` (${r.tfjsErrors} fail)` : ''} |`);
    }
  } else {
    for (const r of rows) {
      lines.push(`${r.label.padEnd(52)} cases=${String(r.cases).padStart(3)} n=${String(r.elements).padStart(7)} kernel=${r.kernels} agree=${r.agree}`);
      lines.push(`    LiteRT: ${r.lite}${r.liteErrors ? ` [${r.liteErrors} failed]` : ''}`);
      lines.push(`    tfjs:   ${r.tfjs}${r.tfjsErrors ? ` [${r.tfjsErrors} failed]` : ''}`);
    }
  }
  return lines.join('\n');
}
