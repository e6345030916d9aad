/** One sample of a Prometheus text exposition: `name{labels} value`. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The families a scrape declares (`# TYPE name type`) and its samples. */
export interface Scrape {
  readonly types: ReadonlyMap<string, string>;
  readonly samples: readonly Sample[];
}

/** GET /metrics as Prometheus scrapes it (with `Authorization: Bearer <token>` when METRICS_TOKEN is set). */
export async function scrape(url: string, token?: string): Promise<Scrape> {
  const res = await fetch(`${url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  if (res.status !== 200) throw new Error(`GET ${url}/metrics answered ${res.status}`);
  return parseExposition(await res.text());
}

export function parseExposition(text: string): Scrape {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1] as string, type[2] as string);
    if (line.startsWith('#') || line.trim() === '') continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] as string] = l[2] as string;
    samples.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return { types, samples };
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function total(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  return s.samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v)).reduce((sum, x) => sum + x.value, 0);
}

/** Every series name the scrape exports: each family, and a histogram's or summary's _bucket/_sum/_count. */
export function exportedNames(s: Scrape): Set<string> {
  const names = new Set<string>();
  for (const [name, type] of s.types) {
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name + suffix);
  }
  return names;
}
