import { isInteger, isLosslessNumber, isSafeNumber, LosslessNumber, parse, stringify } from 'lossless-json';

/**
 * JSON that keeps integers beyond ±2^53 exactly as sent. `JSON.parse` rounds 9007199254740993 to
 * …992, so a payload would not be stored as it was received; here such an integer is parsed into a
 * `LosslessNumber` holding its digits, and `stringifyExact` writes the digits back. Every other
 * number (including long decimals) is parsed as JSON.parse would.
 *
 * The pure-JavaScript parser runs only when the text holds a run of 16 or more digits (the
 * shortest unsafe integer has 16); every other text goes through the native JSON.parse.
 */
const LONG_DIGIT_RUN = /\d{16}/;

export function mayHoldUnsafeIntegers(text: string): boolean {
  return LONG_DIGIT_RUN.test(text);
}

const parseNumber = (digits: string): number | LosslessNumber => (isInteger(digits) && !isSafeNumber(digits) ? new LosslessNumber(digits) : parseFloat(digits));

/**
 * JSON.parse, except that integers beyond ±2^53 come back as LosslessNumber. Throws SyntaxError on
 * bad JSON. Text the exact parser refuses but JSON.parse takes (duplicate keys: the last wins)
 * gets JSON.parse's answer.
 */
export function parseJsonExact(text: string): unknown {
  if (!mayHoldUnsafeIntegers(text)) return JSON.parse(text);
  try {
    return parse(text, null, parseNumber);
  } catch {
    return JSON.parse(text);
  }
}

export function isExactNumber(value: unknown): value is LosslessNumber {
  return isLosslessNumber(value);
}

export function exactNumber(digits: string): LosslessNumber {
  return new LosslessNumber(digits);
}

/** True when a value parsed by parseJsonExact (or built with exactNumber) holds an exact number anywhere. */
export function holdsExactNumbers(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (isLosslessNumber(v)) return true;
    // One push per element: spreading a 200,000-element array into push() overflows the call stack.
    if (Array.isArray(v)) for (const x of v) stack.push(x);
    else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) stack.push(x);
  }
  return false;
}

/** JSON.stringify, writing LosslessNumbers as their digits. */
export function stringifyExact(value: unknown): string | undefined {
  return holdsExactNumbers(value) ? stringify(value) : JSON.stringify(value);
}
