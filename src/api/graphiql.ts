import fs from 'node:fs';
import path from 'node:path';
import { Router } from 'express';

/** Resolves a file inside an npm package through its package.json (deep `exports` are blocked). */
function packageFile(pkg: string, file: string): string {
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file);
}

const ASSETS: Record<string, { file: string; type: string }> = {
  'react.js': { file: packageFile('react', 'umd/react.production.min.js'), type: 'text/javascript' },
  'react-dom.js': { file: packageFile('react-dom', 'umd/react-dom.production.min.js'), type: 'text/javascript' },
  'graphiql.js': { file: packageFile('graphiql', 'graphiql.min.js'), type: 'text/javascript' },
  'graphiql.css': { file: packageFile('graphiql', 'graphiql.min.css'), type: 'text/css' },
  'graphql-ws.js': { file: packageFile('graphql-ws', 'umd/graphql-ws.min.js'), type: 'text/javascript' },
};

// The fetcher sends the Authorization header from GraphiQL's headers tab over HTTP, and the same
// value as connectionParams.authorization over graphql-ws for subscriptions. A token may also be
// given once in the URL fragment (/graphiql#token=...), which browsers never send to the server.
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <title>Medallion memory · GraphiQL</title>
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <link rel="stylesheet" href="/graphiql/assets/graphiql.css" />
  <style>html, body, #graphiql { height: 100%; margin: 0; }</style>
</head>
<body>
  <div id="graphiql">Loading GraphiQL…</div>
  <script src="/graphiql/assets/react.js"></script>
  <script src="/graphiql/assets/react-dom.js"></script>
  <script src="/graphiql/assets/graphql-ws.js"></script>
  <script src="/graphiql/assets/graphiql.js"></script>
  <script>
    (function () {
      var fragmentToken = new URLSearchParams(location.hash.slice(1)).get('token');
      if (fragmentToken) {
        localStorage.setItem('graphiql:headers', JSON.stringify({ Authorization: 'Bearer ' + fragmentToken }, null, 2));
        history.replaceState(null, '', location.pathname);
      }
      var wsUrl = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/graphql';
      var http = GraphiQL.createFetcher({ url: '/graphql' });
      var ws = null, wsAuth = null;
      function authOf(opts) {
        var h = (opts && opts.headers) || {};
        return h.Authorization || h.authorization || '';
      }
      function isSubscription(opts) {
        var doc = opts && opts.documentAST;
        if (!doc) return false;
        return doc.definitions.some(function (d) { return d.kind === 'OperationDefinition' && d.operation === 'subscription'; });
      }
      function fetcher(params, opts) {
        if (!isSubscription(opts)) return http(params, opts);
        var auth = authOf(opts);
        if (!ws || wsAuth !== auth) {
          if (ws) ws.dispose();
          ws = graphqlWs.createClient({ url: wsUrl, connectionParams: { authorization: auth }, lazy: true });
          wsAuth = auth;
        }
        return ws.iterate(params);
      }
      var root = ReactDOM.createRoot(document.getElementById('graphiql'));
      root.render(React.createElement(GraphiQL, {
        fetcher: fetcher,
        defaultHeaders: JSON.stringify({ Authorization: 'Bearer <paste your token>' }, null, 2),
        shouldPersistHeaders: true,
        isHeadersEditorEnabled: true,
        defaultEditorToolsVisibility: 'headers',
        defaultQuery: '# Put your token in the Headers tab below, then run:\\nquery Me {\\n  viewer { name grants { namespacePattern capabilities } }\\n}\\n',
      }));
    })();
  </script>
</body>
</html>`;

/** `/graphiql`: the IDE, served from npm packages in node_modules (no CDN: works offline). */
export function graphiqlRouter(): Router {
  const router = Router();
  const cache = new Map<string, Buffer>();
  router.get('/graphiql', (_req, res) => {
    res.type('html').set('Cache-Control', 'no-store').send(PAGE);
  });
  router.get('/graphiql/assets/:name', (req, res) => {
    const asset = ASSETS[req.params.name];
    if (!asset) {
      res.status(404).send('not found');
      return;
    }
    let body = cache.get(req.params.name);
    if (!body) {
      body = fs.readFileSync(asset.file);
      cache.set(req.params.name, body);
    }
    res.type(asset.type).set('Cache-Control', 'public, max-age=3600').send(body);
  });
  return router;
}
