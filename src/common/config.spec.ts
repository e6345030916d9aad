import { ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  it('gives working defaults for the embedded setup', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 4000, host: '127.0.0.1', databaseUrl: undefined, neo4j: undefined, limits: { maxBatchSize: 1000 } });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('names every bad variable and what it expects, at once', () => {
    let err: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', MAX_BATCH_SIZE: '0', ADMIN_TOKEN: 'short', LOG_LEVEL: 'loud' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toMatch(/PORT="eighty": expected an integer between 0 and 65535/);
    expect(msg).toMatch(/DATABASE_URL="mysql:\/\/x": expected a URL starting with postgres:\/\/ or postgresql:\/\//);
    expect(msg).toMatch(/MAX_BATCH_SIZE="0": expected an integer >= 1/);
    expect(msg).toMatch(/ADMIN_TOKEN=.*at least 24 characters/);
    expect(msg).toMatch(/LOG_LEVEL="loud"/);
  });

  it('SEARCH_SPEAKER_BOOST: unset means the default weight; a number from 0 to 10 is taken; anything else is refused', () => {
    expect(loadConfig({}).search.speakerBoost).toBeNull();
    expect(loadConfig({ SEARCH_SPEAKER_BOOST: '0' }).search.speakerBoost).toBe(0);
    expect(loadConfig({ SEARCH_SPEAKER_BOOST: '0.5' }).search.speakerBoost).toBe(0.5);
    expect(() => loadConfig({ SEARCH_SPEAKER_BOOST: '-1' })).toThrow(/SEARCH_SPEAKER_BOOST/);
    expect(() => loadConfig({ SEARCH_SPEAKER_BOOST: 'high' })).toThrow(/SEARCH_SPEAKER_BOOST/);
  });

  it('SEARCH_GRAPH_GOLD: the graph channel over Gold unless set to false; anything else is refused', () => {
    expect(loadConfig({}).search.graphOverGold).toBe(true);
    expect(loadConfig({ SEARCH_GRAPH_GOLD: 'true' }).search.graphOverGold).toBe(true);
    expect(loadConfig({ SEARCH_GRAPH_GOLD: 'false' }).search.graphOverGold).toBe(false);
    expect(() => loadConfig({ SEARCH_GRAPH_GOLD: 'no' })).toThrow(/SEARCH_GRAPH_GOLD="no": expected true or false/);
  });

  it('SEARCH_WARM_UP_SECONDS and HTTP_KEEP_ALIVE_SECONDS: defaults 15 s and 65 s, in milliseconds; out of range is refused', () => {
    expect(loadConfig({}).search.warmUpMs).toBe(15_000);
    expect(loadConfig({ SEARCH_WARM_UP_SECONDS: '0' }).search.warmUpMs).toBe(0);
    expect(() => loadConfig({ SEARCH_WARM_UP_SECONDS: '-1' })).toThrow(/SEARCH_WARM_UP_SECONDS="-1"/);
    expect(loadConfig({}).httpKeepAliveMs).toBe(65_000);
    expect(loadConfig({ HTTP_KEEP_ALIVE_SECONDS: '120' }).httpKeepAliveMs).toBe(120_000);
    expect(() => loadConfig({ HTTP_KEEP_ALIVE_SECONDS: '0' })).toThrow(/HTTP_KEEP_ALIVE_SECONDS="0"/);
  });

  it('reads the extra MCP host names as a list and refuses URLs in it', () => {
    expect(loadConfig({}).mcpAllowedHosts).toEqual([]);
    expect(loadConfig({ MCP_ALLOWED_HOSTS: ' Memory.Example.com, 10.0.0.5 ,,[::1]' }).mcpAllowedHosts).toEqual(['memory.example.com', '10.0.0.5', '[::1]']);
    expect(() => loadConfig({ MCP_ALLOWED_HOSTS: 'https://memory.example.com:443' })).toThrow(/MCP_ALLOWED_HOSTS.*without scheme, port or path/);
  });

  it('requires Neo4j credentials together', () => {
    expect(() => loadConfig({ NEO4J_URI: 'bolt://db:7687' })).toThrow(/NEO4J_PASSWORD: required when NEO4J_URI is set/);
    expect(loadConfig({ NEO4J_URI: 'bolt://db:7687', NEO4J_PASSWORD: 'pw' }).neo4j).toEqual({ uri: 'bolt://db:7687', user: 'neo4j', password: 'pw' });
  });
});
