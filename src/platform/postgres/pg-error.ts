/** The SQLSTATE and message of a failed statement (TypeORM copies the driver's fields onto its error); undefined when it has none. */
export function pgError(err: unknown): { code: string; message: string } | undefined {
  const e = err as { code?: unknown; message?: unknown; driverError?: { code?: unknown; message?: unknown } };
  const code = typeof e.code === 'string' ? e.code : typeof e.driverError?.code === 'string' ? e.driverError.code : undefined;
  const message = typeof e.driverError?.message === 'string' ? e.driverError.message : typeof e.message === 'string' ? e.message : '';
  return code ? { code, message } : undefined;
}
