export default async function globalTeardown(): Promise<void> {
  const stop = (globalThis as Record<string, unknown>).__MEDALLION_STOP__ as (() => Promise<void>) | undefined;
  await stop?.();
}
