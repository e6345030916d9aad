/** Makes a `switch` exhaustive at compile time. */
export function assertUnreachable(value: never): never {
  throw new Error(`unreachable: ${JSON.stringify(value)}`);
}
