// gemmlowp fixed-point logistic / tanh on int16 (fixedpoint.h: exp_on_negative_values,
// one_over_one_plus_x_for_x_in_0_1, one_minus_x_over_one_plus_x_for_x_in_0_1, logistic, tanh),
// as TFLite's optimized_ops::Logistic / Tanh (int16) run them: used by LOGISTIC / TANH int16
// when the input scale is a power of two with input_left_shift 0 (LOGISTIC, s_in = 2^-12) or
// 0/1 (TANH, s_in = 2^-12 or 2^-11; a shift of 1 first doubles the input, saturating).
// All values are raw int16; F<k> means k integer bits (15 - k fractional bits).
const w16 = (v) => (v << 16) >> 16; // int16 wrap-around (plain FixedPoint + - and negation)
const sat16 = (v) => (v > 32767 ? 32767 : v < -32768 ? -32768 : v);
function srdhm16(a, b) {
  if (a === -32768 && b === -32768) return 32767;
  const ab = a * b;
  const nudge = ab >= 0 ? 1 << 14 : 1 - (1 << 14);
  return w16(Math.trunc((ab + nudge) / 32768));
}
function rdbpot16(x, e) {
  if (e === 0) return x;
  const mask = (1 << e) - 1;
  const rem = x & mask;
  const th = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> e) + (rem > th ? 1 : 0);
}
function srMulPot16(x, e) { // SaturatingRoundingMultiplyByPOT<e>
  if (e === 0) return x;
  if (e < 0) return rdbpot16(x, -e);
  const th = (1 << (15 - e)) - 1;
  if (x > th) return 32767;
  if (x < -th) return -32768;
  return x << e;
}
const rescaleConst = (v32) => { // RescaleConstantInitializer<int16>: RoundingDivideByPOT(v, 16)
  const p = 65536;
  const q = Math.floor(v32 / p);
  const rem = v32 - q * p;
  const th = 32767 + (v32 < 0 ? 1 : 0);
  return q + (rem > th ? 1 : 0);
};
const roundingHalfSum16 = (a, b) => { const s = a + b; return Math.trunc((s + (s >= 0 ? 1 : -1)) / 2); };

function expOnIntervalQuarter(a) { // F0 -> F0
  const constantTerm = rescaleConst(1895147668);
  const c13 = rescaleConst(715827883);
  const x = w16(a + (1 << 12)); // + ConstantPOT<-3> of F0
  const x2 = srdhm16(x, x);
  const x3 = srdhm16(x2, x);
  const x4 = srdhm16(x2, x2);
  const x4q = srMulPot16(x4, -2);
  const t = srMulPot16(w16(srdhm16(w16(x4q + x3), c13) + x2), -1);
  return sat16(constantTerm + srdhm16(constantTerm, w16(x + t)));
}
const BARREL = [[-2, 1672461947], [-1, 1302514674], [0, 790015084], [1, 290630308], [2, 39332535], [3, 720401], [4, 242]];
function expOnNegativeValues(a, ib) { // F<ib> -> F0, a <= 0
  const fb = 15 - ib;
  const quarter = 1 << (fb - 2);
  const aModMinusQuarter = w16((a & (quarter - 1)) - quarter);
  let result = expOnIntervalQuarter(srMulPot16(aModMinusQuarter, ib)); // Rescale<0>
  const remainder = w16(aModMinusQuarter - a);
  for (const [e, m] of BARREL) {
    if (ib > e) {
      const shift = fb + e;
      if (remainder & (1 << shift)) result = srdhm16(result, rescaleConst(m));
    }
  }
  if (a === 0) result = 32767;
  return result;
}
function newton(a, minusOne) { // shared by one_over_one_plus_x and one_minus_x_over_one_plus_x
  const half = roundingHalfSum16(a, 32767);
  const c48 = rescaleConst(1515870810);
  const cn32 = rescaleConst(-1010580540);
  let x = w16(c48 + srdhm16(half, cn32));
  for (let i = 0; i < 3; i++) {
    const hx = srdhm16(half, x);
    const om = w16((1 << 13) - hx);
    x = w16(x + srMulPot16(srdhm16(x, om), 2));
  }
  return minusOne ? srMulPot16(w16(x - (1 << 13)), 2) : srMulPot16(x, 1);
}
export function gemmlowpLogistic16(a) { // input F3 raw
  if (a === 0) return 1 << 14;
  const pos = a > 0;
  const abs = pos ? a : w16(-a);
  const rp = newton(expOnNegativeValues(w16(-abs), 3), false);
  return pos ? rp : w16(32767 - rp);
}
export function gemmlowpTanh16(a) { // input F3 raw
  if (a === 0) return 0;
  const neg = a < 0;
  const n = neg ? a : w16(-a);
  const t = newton(expOnNegativeValues(n, 4), true); // ExactMulByPot<1>: same raw as F4
  return neg ? w16(-t) : t;
}
// TANH int16 with input_left_shift 1 (s_in = 2^-11): the input is first doubled (saturating).
export const gemmlowpTanh16Shift1 = (a) => gemmlowpTanh16(srMulPot16(a, 1));
