/**
 * A hand-kept gazetteer of well-known technologies, programming languages and frameworks for the
 * offline extractor. Each row: `Canonical|type|category|alias,alias`. The type is an ontology
 * entity type; the category groups interchangeable things (two editors, two databases), which the
 * judge uses to tell "switched to neovim" (replaces vim) from "also uses Docker".
 *
 * Names that are ordinary English words ("go", "rust", "swift", "fish", "arch") are marked with a
 * leading `~`: in free text they match only when written exactly as the canonical name or an
 * alias (case-sensitive), in an object position of a usage rule they match case-insensitively.
 */

export type GazetteerType = 'technology' | 'programming_language' | 'framework';

export interface GazetteerEntry {
  name: string;
  type: GazetteerType;
  category: string;
  aliases: readonly string[];
  /** An ordinary English word too: matched case-sensitively in free text. */
  ambiguous: boolean;
}

const T = 'technology';
const L = 'programming_language';
const F = 'framework';

const ROWS: ReadonlyArray<readonly [string, GazetteerType, string, string]> = [
  // programming languages
  ['JavaScript', L, 'language', 'js,ecmascript'],
  ['TypeScript', L, 'language', 'ts'],
  ['Python', L, 'language', 'py,python3'],
  ['~Go', L, 'language', 'golang'],
  ['~Rust', L, 'language', 'rustlang'],
  ['Java', L, 'language', ''],
  ['Kotlin', L, 'language', ''],
  ['Scala', L, 'language', ''],
  ['C#', L, 'language', 'csharp,c sharp'],
  ['C++', L, 'language', 'cpp,cplusplus'],
  ['~C', L, 'language', ''],
  ['~Ruby', L, 'language', ''],
  ['PHP', L, 'language', ''],
  ['~Swift', L, 'language', ''],
  ['Objective-C', L, 'language', 'objc'],
  ['Haskell', L, 'language', ''],
  ['Elixir', L, 'language', ''],
  ['Erlang', L, 'language', ''],
  ['Clojure', L, 'language', ''],
  ['OCaml', L, 'language', ''],
  ['F#', L, 'language', 'fsharp'],
  ['~Dart', L, 'language', ''],
  ['Lua', L, 'language', ''],
  ['Perl', L, 'language', ''],
  ['~R', L, 'language', 'rlang'],
  ['~Julia', L, 'language', ''],
  ['Zig', L, 'language', ''],
  ['Nim', L, 'language', ''],
  ['~Crystal', L, 'language', ''],
  ['~Elm', L, 'language', ''],
  ['Groovy', L, 'language', ''],
  ['SQL', L, 'language', ''],
  ['Bash', L, 'language', 'bash script'],
  ['PowerShell', L, 'language', 'pwsh'],
  ['Solidity', L, 'language', ''],
  ['Fortran', L, 'language', ''],
  ['COBOL', L, 'language', ''],
  ['MATLAB', L, 'language', ''],
  ['Visual Basic', L, 'language', 'vb,vb.net'],
  ['~Assembly', L, 'language', 'asm'],
  ['Prolog', L, 'language', ''],
  ['Racket', L, 'language', ''],
  ['Common Lisp', L, 'language', 'lisp'],
  ['~Scheme', L, 'language', ''],
  ['Gleam', L, 'language', ''],
  ['Mojo', L, 'language', ''],
  ['WebAssembly', L, 'language', 'wasm'],
  ['HTML', L, 'language', ''],
  ['CSS', L, 'language', ''],
  ['Sass', L, 'language', 'scss'],
  ['GraphQL', T, 'api', ''],
  // frameworks and libraries
  ['React', F, 'frontend', 'reactjs,react.js'],
  ['Vue', F, 'frontend', 'vue.js,vuejs'],
  ['Angular', F, 'frontend', 'angularjs'],
  ['Svelte', F, 'frontend', 'sveltekit'],
  ['SolidJS', F, 'frontend', 'solid.js'],
  ['Next.js', F, 'web', 'nextjs'],
  ['Nuxt', F, 'web', 'nuxt.js'],
  ['~Remix', F, 'web', ''],
  ['Astro', F, 'web', ''],
  ['~Express', F, 'backend', 'express.js,expressjs'],
  ['NestJS', F, 'backend', '~Nest'],
  ['Fastify', F, 'backend', ''],
  ['Koa', F, 'backend', ''],
  ['Hono', F, 'backend', ''],
  ['Django', F, 'backend', ''],
  ['~Flask', F, 'backend', ''],
  ['FastAPI', F, 'backend', ''],
  ['Ruby on Rails', F, 'backend', '~Rails,ror'],
  ['Laravel', F, 'backend', ''],
  ['Symfony', F, 'backend', ''],
  ['Spring Boot', F, 'backend', '~Spring'],
  ['ASP.NET', F, 'backend', 'asp.net core'],
  ['.NET', F, 'runtime', 'dotnet'],
  ['~Phoenix', F, 'backend', ''],
  ['~Gin', F, 'backend', ''],
  ['Actix', F, 'backend', 'actix-web'],
  ['Axum', F, 'backend', ''],
  ['~Rocket', F, 'backend', ''],
  ['Flutter', F, 'mobile', ''],
  ['React Native', F, 'mobile', ''],
  ['SwiftUI', F, 'mobile', ''],
  ['Jetpack Compose', F, 'mobile', ''],
  ['Ionic', F, 'mobile', ''],
  ['~Electron', F, 'desktop', ''],
  ['Tauri', F, 'desktop', ''],
  ['Qt', F, 'desktop', ''],
  ['jQuery', F, 'frontend', ''],
  ['Redux', F, 'state', ''],
  ['Tailwind CSS', F, 'css', 'tailwind,tailwindcss'],
  ['~Bootstrap', F, 'css', ''],
  ['TensorFlow', F, 'ml', ''],
  ['PyTorch', F, 'ml', ''],
  ['scikit-learn', F, 'ml', 'sklearn'],
  ['Keras', F, 'ml', ''],
  ['pandas', F, 'data', ''],
  ['NumPy', F, 'data', ''],
  ['Polars', F, 'data', ''],
  ['Apache Spark', F, 'data-processing', 'spark,pyspark'],
  ['Hugging Face Transformers', F, 'ml', ''],
  ['LangChain', F, 'llm', ''],
  ['LlamaIndex', F, 'llm', ''],
  ['Jest', F, 'testing', ''],
  ['Vitest', F, 'testing', ''],
  ['~Mocha', F, 'testing', ''],
  ['Cypress', F, 'testing', ''],
  ['Playwright', F, 'testing', ''],
  ['Selenium', F, 'testing', ''],
  ['pytest', F, 'testing', ''],
  ['JUnit', F, 'testing', ''],
  ['RSpec', F, 'testing', ''],
  ['TypeORM', F, 'orm', ''],
  ['Prisma', F, 'orm', ''],
  ['Sequelize', F, 'orm', ''],
  ['Drizzle', F, 'orm', 'drizzle orm'],
  ['SQLAlchemy', F, 'orm', ''],
  ['Hibernate', F, 'orm', ''],
  ['Entity Framework', F, 'orm', 'ef core'],
  ['~Apollo', F, 'graphql', 'apollo server,apollo client'],
  ['type-graphql', F, 'graphql', 'typegraphql'],
  ['tRPC', F, 'api', ''],
  ['gRPC', T, 'api', 'grpc-web'],
  ['Pydantic', F, 'validation', ''],
  ['zod', F, 'validation', ''],
  ['Celery', F, 'queue', ''],
  ['Sidekiq', F, 'queue', ''],
  ['dbt', F, 'data-transform', 'dbt core'],
  ['Streamlit', F, 'data-app', ''],
  ['Gradio', F, 'data-app', ''],
  ['Three.js', F, 'graphics', 'threejs'],
  ['D3', F, 'charts', 'd3.js'],
  ['~Unity', F, 'game-engine', ''],
  ['~Unreal Engine', F, 'game-engine', 'unreal,ue5'],
  ['Godot', F, 'game-engine', ''],
  // databases and data stores
  ['PostgreSQL', T, 'database', 'postgres,pg,psql db,postgresql db,postgre'],
  ['MySQL', T, 'database', 'mysql db'],
  ['MariaDB', T, 'database', ''],
  ['SQLite', T, 'database', 'sqlite3'],
  ['Microsoft SQL Server', T, 'database', 'sql server,mssql'],
  ['Oracle Database', T, 'database', 'oracle db'],
  ['MongoDB', T, 'database', 'mongo'],
  ['Cassandra', T, 'database', 'apache cassandra'],
  ['CockroachDB', T, 'database', 'cockroach'],
  ['DynamoDB', T, 'database', 'dynamo'],
  ['Firestore', T, 'database', ''],
  ['Supabase', T, 'database', ''],
  ['PlanetScale', T, 'database', ''],
  ['Neo4j', T, 'graph-database', ''],
  ['Redis', T, 'cache', ''],
  ['Memcached', T, 'cache', ''],
  ['Valkey', T, 'cache', ''],
  ['Elasticsearch', T, 'search', 'elastic'],
  ['OpenSearch', T, 'search', ''],
  ['Meilisearch', T, 'search', ''],
  ['Solr', T, 'search', 'apache solr'],
  ['ClickHouse', T, 'warehouse', ''],
  ['Snowflake', T, 'warehouse', ''],
  ['BigQuery', T, 'warehouse', 'bq'],
  ['Amazon Redshift', T, 'warehouse', 'redshift'],
  ['Databricks', T, 'warehouse', ''],
  ['DuckDB', T, 'warehouse', ''],
  ['InfluxDB', T, 'timeseries', ''],
  ['TimescaleDB', T, 'timeseries', 'timescale'],
  ['Pinecone', T, 'vector-db', ''],
  ['Weaviate', T, 'vector-db', ''],
  ['Qdrant', T, 'vector-db', ''],
  ['Milvus', T, 'vector-db', ''],
  ['pgvector', T, 'vector-db', ''],
  // messaging and streaming
  ['Kafka', T, 'messaging', 'apache kafka'],
  ['RabbitMQ', T, 'messaging', 'rabbit'],
  ['NATS', T, 'messaging', ''],
  ['Amazon SQS', T, 'messaging', 'sqs'],
  ['Apache Pulsar', T, 'messaging', 'pulsar'],
  ['Airflow', T, 'orchestration', 'apache airflow'],
  ['Dagster', T, 'orchestration', ''],
  ['~Prefect', T, 'orchestration', ''],
  ['~Temporal', T, 'orchestration', ''],
  ['Apache Flink', T, 'data-processing', 'flink'],
  // editors and IDEs
  ['Vim', T, 'editor', 'vi'],
  ['Neovim', T, 'editor', 'nvim,neo vim'],
  ['Emacs', T, 'editor', 'gnu emacs,spacemacs,doom emacs'],
  ['VS Code', T, 'editor', 'vscode,visual studio code'],
  ['Visual Studio', T, 'editor', ''],
  ['IntelliJ IDEA', T, 'editor', 'intellij'],
  ['PyCharm', T, 'editor', ''],
  ['WebStorm', T, 'editor', ''],
  ['GoLand', T, 'editor', ''],
  ['CLion', T, 'editor', ''],
  ['~Rider', T, 'editor', ''],
  ['Xcode', T, 'editor', ''],
  ['Android Studio', T, 'editor', ''],
  ['~Eclipse', T, 'editor', ''],
  ['~Sublime Text', T, 'editor', 'sublime'],
  ['~Atom', T, 'editor', ''],
  ['~Helix', T, 'editor', 'hx'],
  ['Zed', T, 'editor', ''],
  ['~Cursor', T, 'editor', ''],
  ['~Nano', T, 'editor', ''],
  ['Notepad++', T, 'editor', ''],
  ['Jupyter', T, 'notebook', 'jupyter notebook,jupyterlab'],
  // editor plugins and terminal tools
  ['fzf', T, 'cli-tool', ''],
  ['fugitive', T, 'editor-plugin', 'vim-fugitive'],
  ['ripgrep', T, 'cli-tool', 'rg'],
  ['tmux', T, 'multiplexer', ''],
  ['GNU Screen', T, 'multiplexer', ''],
  ['Zellij', T, 'multiplexer', ''],
  ['jq', T, 'cli-tool', ''],
  ['htop', T, 'cli-tool', ''],
  ['curl', T, 'cli-tool', ''],
  ['psql', T, 'db-client', ''],
  ['pgAdmin', T, 'db-client', 'pgadmin4'],
  ['DBeaver', T, 'db-client', ''],
  ['DataGrip', T, 'db-client', ''],
  ['TablePlus', T, 'db-client', ''],
  ['Postman', T, 'api-client', ''],
  ['Insomnia', T, 'api-client', ''],
  // shells and terminals
  ['~fish', T, 'shell', 'fish shell'],
  ['zsh', T, 'shell', 'oh my zsh'],
  ['Bash shell', T, 'shell', ''],
  ['Nushell', T, 'shell', ''],
  ['WezTerm', T, 'terminal', ''],
  ['iTerm2', T, 'terminal', 'iterm'],
  ['Alacritty', T, 'terminal', ''],
  ['~Kitty', T, 'terminal', ''],
  ['Windows Terminal', T, 'terminal', ''],
  ['Ghostty', T, 'terminal', ''],
  ['~Warp', T, 'terminal', ''],
  // operating systems
  ['Linux', T, 'os', ''],
  ['~Windows', T, 'os', 'win10,win11,windows 11,windows 10'],
  ['macOS', T, 'os', 'mac os,os x,osx'],
  ['Ubuntu', T, 'os', ''],
  ['Debian', T, 'os', ''],
  ['Fedora', T, 'os', ''],
  ['Arch Linux', T, 'os', '~Arch,archlinux'],
  ['NixOS', T, 'os', 'nix'],
  ['FreeBSD', T, 'os', ''],
  ['Android', T, 'mobile-os', ''],
  ['iOS', T, 'mobile-os', ''],
  ['WSL', T, 'os', 'wsl2'],
  // browsers
  ['~Chrome', T, 'browser', 'google chrome'],
  ['Firefox', T, 'browser', 'mozilla firefox'],
  ['~Safari', T, 'browser', ''],
  ['~Edge', T, 'browser', 'microsoft edge'],
  ['~Brave', T, 'browser', ''],
  ['~Arc', T, 'browser', ''],
  ['Vivaldi', T, 'browser', ''],
  // runtimes and package managers
  ['Node.js', T, 'runtime', '~Node,nodejs'],
  ['Deno', T, 'runtime', ''],
  ['Bun', T, 'runtime', 'bun.js'],
  ['JVM', T, 'runtime', ''],
  ['npm', T, 'package-manager', ''],
  ['pnpm', T, 'package-manager', ''],
  ['Yarn', T, 'package-manager', ''],
  ['pip', T, 'py-package-manager', ''],
  ['~Poetry', T, 'py-package-manager', ''],
  ['uv', T, 'py-package-manager', ''],
  ['Conda', T, 'py-package-manager', 'anaconda,miniconda'],
  ['~Cargo', T, 'build', ''],
  ['Maven', T, 'build', ''],
  ['Gradle', T, 'build', ''],
  ['Bazel', T, 'build', ''],
  ['~Make', T, 'build', 'makefile'],
  ['Vite', T, 'bundler', ''],
  ['webpack', T, 'bundler', ''],
  ['esbuild', T, 'bundler', ''],
  ['~Rollup', T, 'bundler', ''],
  ['Turbopack', T, 'bundler', ''],
  ['SWC', T, 'compiler', ''],
  ['~Babel', T, 'compiler', ''],
  ['ESLint', T, 'linter', ''],
  ['Prettier', T, 'formatter', ''],
  ['~Biome', T, 'linter', ''],
  ['Ruff', T, 'linter', ''],
  ['~Black', T, 'formatter', ''],
  ['mypy', T, 'type-checker', ''],
  // infrastructure, cloud and ops
  ['Docker', T, 'container', ''],
  ['Podman', T, 'container', ''],
  ['Kubernetes', T, 'orchestrator', 'k8s,kube'],
  ['~Nomad', T, 'orchestrator', ''],
  ['Docker Compose', T, 'container', 'docker-compose'],
  ['~Helm', T, 'deploy', ''],
  ['Terraform', T, 'iac', ''],
  ['OpenTofu', T, 'iac', ''],
  ['Pulumi', T, 'iac', ''],
  ['Ansible', T, 'config-management', ''],
  ['~Chef', T, 'config-management', ''],
  ['~Puppet', T, 'config-management', ''],
  ['AWS', T, 'cloud', 'amazon web services'],
  ['Google Cloud', T, 'cloud', 'gcp,google cloud platform'],
  ['Azure', T, 'cloud', 'microsoft azure'],
  ['DigitalOcean', T, 'cloud', ''],
  ['Hetzner', T, 'cloud', ''],
  ['Heroku', T, 'cloud', ''],
  ['Vercel', T, 'hosting', ''],
  ['Netlify', T, 'hosting', ''],
  ['Fly.io', T, 'hosting', ''],
  ['~Render', T, 'hosting', ''],
  ['Cloudflare', T, 'cdn', 'cloudflare workers'],
  ['AWS Lambda', T, 'serverless', '~Lambda'],
  ['Amazon RDS', T, 'managed-database', 'aws rds,rds'],
  ['Amazon S3', T, 's3', 's3'],
  ['Amazon EC2', T, 'compute', 'ec2'],
  ['Nginx', T, 'web-server', ''],
  ['Apache HTTP Server', T, 'web-server', 'httpd'],
  ['Caddy', T, 'web-server', ''],
  ['Traefik', T, 'web-server', ''],
  ['HAProxy', T, 'web-server', ''],
  ['Prometheus', T, 'monitoring', ''],
  ['Grafana', T, 'monitoring', ''],
  ['Datadog', T, 'monitoring', ''],
  ['New Relic', T, 'monitoring', ''],
  ['Sentry', T, 'error-tracking', ''],
  ['OpenTelemetry', T, 'observability', 'otel'],
  ['Jaeger', T, 'tracing', ''],
  ['Splunk', T, 'logging', ''],
  ['~Loki', T, 'logging', ''],
  ['Kibana', T, 'logging', ''],
  ['Istio', T, 'service-mesh', ''],
  ['Linkerd', T, 'service-mesh', ''],
  ['~Consul', T, 'service-discovery', ''],
  ['~Vault', T, 'secrets', 'hashicorp vault'],
  ['Keycloak', T, 'auth', ''],
  ['Auth0', T, 'auth', ''],
  ['Okta', T, 'auth', ''],
  // version control, CI and collaboration
  ['Git', T, 'vcs', ''],
  ['Mercurial', T, 'vcs', 'hg'],
  ['Subversion', T, 'vcs', 'svn'],
  ['GitHub', T, 'code-hosting', ''],
  ['GitLab', T, 'code-hosting', ''],
  ['Bitbucket', T, 'code-hosting', ''],
  ['GitHub Actions', T, 'ci', 'gh actions'],
  ['GitLab CI', T, 'ci', 'gitlab ci/cd'],
  ['Jenkins', T, 'ci', ''],
  ['CircleCI', T, 'ci', ''],
  ['Travis CI', T, 'ci', 'travis'],
  ['Buildkite', T, 'ci', ''],
  ['Argo CD', T, 'cd', 'argocd'],
  ['Jira', T, 'issue-tracker', ''],
  ['~Linear', T, 'issue-tracker', ''],
  ['Trello', T, 'issue-tracker', ''],
  ['Asana', T, 'issue-tracker', ''],
  ['Confluence', T, 'wiki', ''],
  ['~Notion', T, 'notes', ''],
  ['~Obsidian', T, 'notes', ''],
  ['Evernote', T, 'notes', ''],
  ['Slack', T, 'chat', ''],
  ['Discord', T, 'chat', ''],
  ['Microsoft Teams', T, 'chat', 'ms teams,~Teams'],
  ['~Zoom', T, 'video-call', ''],
  ['Google Meet', T, 'video-call', ''],
  ['Figma', T, 'design', ''],
  ['~Sketch', T, 'design', ''],
  ['Looker', T, 'bi', ''],
  ['Tableau', T, 'bi', ''],
  ['Metabase', T, 'bi', ''],
  ['Power BI', T, 'bi', ''],
  ['Superset', T, 'bi', 'apache superset'],
  ['~Excel', T, 'spreadsheet', 'microsoft excel'],
  ['Google Sheets', T, 'spreadsheet', ''],
  // AI tools and models
  ['ChatGPT', T, 'assistant', ''],
  ['~Claude', T, 'assistant', ''],
  ['GitHub Copilot', T, 'code-assistant', '~Copilot'],
  ['Ollama', T, 'llm-runtime', ''],
  ['OpenAI API', T, 'llm-api', 'openai'],
  ['~Llama', T, 'llm', ''],
  // themes
  ['Gruvbox', T, 'theme', ''],
  ['~Dracula', T, 'theme', ''],
  ['Solarized', T, 'theme', ''],
  ['~Nord', T, 'theme', ''],
  ['Catppuccin', T, 'theme', ''],
  ['Tokyo Night', T, 'theme', ''],
  ['Monokai', T, 'theme', ''],
];

function parseRow([rawName, type, category, rawAliases]: readonly [string, GazetteerType, string, string]): GazetteerEntry {
  const ambiguous = rawName.startsWith('~');
  const aliases = rawAliases
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a.length > 0);
  return { name: ambiguous ? rawName.slice(1) : rawName, type, category, aliases, ambiguous };
}

export const GAZETTEER: readonly GazetteerEntry[] = ROWS.map(parseRow);

export interface GazetteerKey {
  /** The surface form, as written in the gazetteer. */
  form: string;
  entry: GazetteerEntry;
  /** Match only this exact casing in free text. */
  caseSensitive: boolean;
}

function buildKeys(): GazetteerKey[] {
  const keys: GazetteerKey[] = [];
  for (const entry of GAZETTEER) {
    keys.push({ form: entry.name, entry, caseSensitive: entry.ambiguous });
    for (const alias of entry.aliases) {
      const amb = alias.startsWith('~');
      keys.push({ form: amb ? alias.slice(1) : alias, entry, caseSensitive: amb });
    }
  }
  // Longest forms first so "Arch Linux" beats "Linux" and "GitLab CI" beats "GitLab".
  return keys.sort((a, b) => b.form.length - a.form.length || a.form.localeCompare(b.form));
}

export const GAZETTEER_KEYS: readonly GazetteerKey[] = buildKeys();

const byLowerForm = new Map<string, GazetteerEntry>();
for (const key of [...GAZETTEER_KEYS].reverse()) byLowerForm.set(key.form.toLowerCase(), key.entry);
// Canonical names win over aliases of other entries ("Bash" the language over nothing).
for (const entry of GAZETTEER) byLowerForm.set(entry.name.toLowerCase(), entry);

/** Exact lookup of a phrase (case-insensitive) by canonical name or alias. */
export function lookupTech(phrase: string): GazetteerEntry | undefined {
  return byLowerForm.get(phrase.trim().toLowerCase());
}

export interface GazetteerHit {
  entry: GazetteerEntry;
  start: number;
  end: number;
  text: string;
}

const WORD_CHAR = /[A-Za-z0-9+#]/;

/**
 * Every gazetteer mention in `text`, longest match first, non-overlapping, in text order.
 * `lenient` matches ambiguous names case-insensitively too (used inside object phrases).
 */
export function findTech(text: string, lenient = false): GazetteerHit[] {
  const lower = text.toLowerCase();
  const taken = new Array<boolean>(text.length).fill(false);
  const hits: GazetteerHit[] = [];
  for (const key of GAZETTEER_KEYS) {
    const needle = key.form.toLowerCase();
    let from = 0;
    for (;;) {
      const at = lower.indexOf(needle, from);
      if (at < 0) break;
      from = at + 1;
      const end = at + needle.length;
      if (at > 0 && WORD_CHAR.test(text[at - 1] as string)) continue;
      // A trailing "." is sentence punctuation, not part of "Node.js".
      if (end < text.length && WORD_CHAR.test(text[end] as string)) continue;
      if (key.caseSensitive && !lenient && text.slice(at, end) !== key.form) continue;
      let free = true;
      for (let i = at; i < end; i++) if (taken[i]) free = false;
      if (!free) continue;
      for (let i = at; i < end; i++) taken[i] = true;
      hits.push({ entry: key.entry, start: at, end, text: text.slice(at, end) });
    }
  }
  return hits.sort((a, b) => a.start - b.start);
}

/** The canonical form used for comparing values: the gazetteer name when known, else the phrase. */
export function canonicalValue(phrase: string): string {
  return lookupTech(phrase)?.name ?? phrase;
}
