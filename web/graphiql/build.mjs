// Builds the offline GraphiQL playground into ../dist/graphiql/:
//   index.html, graphiql.js, graphiql.css (fixed names, minified, deterministic).
// Everything comes from node_modules; nothing is loaded from a CDN at runtime.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, '..', 'dist', 'graphiql');

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });

await build({
  absWorkingDir: here,
  entryPoints: ['src/main.jsx'],
  outfile: join(outDir, 'graphiql.js'), // the imported CSS lands in graphiql.css
  bundle: true,
  minify: true,
  format: 'iife',
  platform: 'browser',
  target: ['es2020'],
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'eof',
  sourcemap: false,
  charset: 'utf8',
  // Any font/image referenced from CSS is inlined; nothing is fetched from elsewhere.
  loader: {
    '.woff': 'dataurl',
    '.woff2': 'dataurl',
    '.ttf': 'dataurl',
    '.eot': 'dataurl',
    '.png': 'dataurl',
    '.gif': 'dataurl',
    '.svg': 'dataurl',
  },
  logLevel: 'warning',
});

copyFileSync(join(here, 'src', 'index.html'), join(outDir, 'index.html'));

// Guard: the output must not load anything from the network.
const files = readdirSync(outDir).sort();
const expected = ['graphiql.css', 'graphiql.js', 'index.html'];
if (JSON.stringify(files) !== JSON.stringify(expected)) {
  throw new Error(`unexpected output files: ${files.join(', ')}`);
}
const css = readFileSync(join(outDir, 'graphiql.css'), 'utf8');
const badCss = css.match(/url\(\s*["']?(?!data:)[^)]*\)|@import/g);
if (badCss) throw new Error(`graphiql.css references external resources: ${badCss.join(' ')}`);
const html = readFileSync(join(outDir, 'index.html'), 'utf8');
if (/(src|href)=["']?(https?:)?\/\//.test(html)) throw new Error('index.html references an external URL');
const js = readFileSync(join(outDir, 'graphiql.js'), 'utf8');
for (const cdn of ['fonts.googleapis.com', 'fonts.gstatic.com', 'unpkg.com', 'cdn.jsdelivr.net', 'cdnjs.cloudflare.com']) {
  if (js.includes(cdn) || css.includes(cdn) || html.includes(cdn)) throw new Error(`output mentions ${cdn}`);
}
for (const f of files) console.log(`${f}\t${readFileSync(join(outDir, f)).length} bytes`);
