import { Embedder } from '../silver/model-ports';
import { lazyEmbedder } from './search.service';

/** An embedder that counts its closes (the ONNX one stops its worker threads there). */
function counted(): Embedder & { closes: number } {
  const e = {
    model: 'counted',
    dimensions: 1,
    closes: 0,
    embed: async (texts: string[]) => texts.map(() => [1]),
    embedQuery: async (texts: string[]) => texts.map(() => [1]),
    close: async () => {
      e.closes++;
    },
  };
  return e;
}

describe('lazyEmbedder', () => {
  it('loads once for concurrent callers, and close releases what it loaded', async () => {
    const loaded: Array<ReturnType<typeof counted>> = [];
    const embedder = lazyEmbedder(async () => {
      const e = counted();
      loaded.push(e);
      return e;
    });
    await embedder.close(); // nothing loaded: nothing to release, nothing loaded by it
    expect(loaded).toHaveLength(0);

    const [a, b] = await Promise.all([embedder(), embedder()]);
    expect(a).toBe(b);
    expect(loaded).toHaveLength(1);
    await embedder.close();
    expect(loaded[0]?.closes).toBe(1);

    // A use after close loads a fresh one rather than handing back the closed one.
    const c = await embedder();
    expect(c).not.toBe(a);
    expect(loaded).toHaveLength(2);
  });

  it('retries a failed load, and close after a failed load is quiet', async () => {
    let attempts = 0;
    const embedder = lazyEmbedder(async () => {
      attempts++;
      if (attempts === 1) throw new Error('model files missing');
      return counted();
    });
    await expect(embedder()).rejects.toThrow('model files missing');
    await expect(embedder.close()).resolves.toBeUndefined();
    await expect(embedder()).resolves.toMatchObject({ model: 'counted' });
    expect(attempts).toBe(2);
  });
});
