/**
 * What a Lambda handler's own code can send to AWS, read from the code (test/cdk/iam-actions.test.ts
 * compares it with the handler's role).
 *
 * Each handler is bundled with esbuild the way the deployed function is (one entry, everything it
 * imports), except that packages stay external: the bundle is this repository's code only, tree-shaken,
 * with every package import kept as an `import { X as Y } from "pkg"` that names what is used. The
 * bundle is then read with TypeScript's parser: each reference to an `@aws-sdk/*` export (a
 * `new XxxCommand(`, a client, an error class), each package the live code uses, each `fetch`, each
 * string naming an AWS endpoint host, and each import()/require() the bundler could not follow.
 *
 * Two refinements keep "reached" close to "called":
 * - Module-level wiring a handler does not use is dropped. lambdas/handlers/*-deps.ts build the
 *   ledger, the executions client, EKS access and the channel secrets at load for the handlers that import them, and
 *   esbuild must keep a call it cannot prove pure. Before bundling, a top-level `const x = <init>`
 *   whose initializer makes calls is rewritten to `/* @__PURE__ *\/ (() => (<init>))()`, so the
 *   bundler drops it when nothing reads `x`. It is left alone when the initializer passes a function
 *   (a callback may run later), sends a command itself (`.send(`) or awaits.
 * - A command constructed in a method of an object literal (an adapter such as
 *   lambdas/api/executions.ts's `{ start, stop }`) is reported with that method's name and whether
 *   anything in the bundle names that member (`x.stop`, `x['stop']`, `{ stop } = x`). Name-based,
 *   so it can only over-report a method as used, never miss a use by that name.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { build, type Metafile, type Plugin } from 'esbuild';
import ts from 'typescript';

/** One handler to read: a file of the repository, or inline code (the analysis' own tests). */
export type HandlerSource = string | { contents: string; sourcefile: string };

export interface SdkUse {
  /** The package, e.g. `@aws-sdk/client-sfn`. */
  module: string;
  /** The export used, e.g. `StartExecutionCommand`; `*` when a namespace import escapes (passed around whole). */
  name: string;
  /** The repository file the use is in. */
  file: string;
  /** `new <name>(…)`. */
  constructed: boolean;
  /** The object-literal method the use sits in, and whether anything in the bundle names that member. */
  method?: { name: string; used: boolean };
}

/** A place in the code: its repository file and the text found there. */
export interface CodeFact {
  file: string;
  text: string;
}

export interface HandlerCode {
  /** The repository files the bundle reached (esbuild's metafile inputs). */
  files: string[];
  /** Every reference to an `@aws-sdk/*` export in the tree-shaken code. */
  sdk: SdkUse[];
  /** Packages (and Node built-ins) the live code uses, with the file using each: `text` is the module. */
  packages: CodeFact[];
  /** `fetch`, XMLHttpRequest, WebSocket or EventSource referenced. */
  globals: CodeFact[];
  /** String literals naming an AWS endpoint host (`….amazonaws.com`, `….api.aws`). */
  awsHosts: CodeFact[];
  /** `import(…)` and `require(…)` left in the bundle: code it cannot see. */
  dynamicLoads: CodeFact[];
}

const NETWORK_GLOBALS = new Set(['fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource']);
const AWS_HOST = /amazonaws\.com|\bapi\.aws\b/;

/** Bundles each handler and reads what its code uses; the builds run in parallel. */
export async function analyseHandlers<K extends string>(handlers: Record<K, HandlerSource>, root: string): Promise<Record<K, HandlerCode>> {
  const entries = await Promise.all(Object.entries<HandlerSource>(handlers).map(async ([kind, source]) => [kind, await analyseHandler(source, root)] as const));
  return Object.fromEntries(entries) as Record<K, HandlerCode>;
}

export async function analyseHandler(source: HandlerSource, root: string): Promise<HandlerCode> {
  const result = await build({
    ...(typeof source === 'string'
      ? { entryPoints: [resolve(root, source)] }
      : {
          stdin: {
            contents: wrapModuleInitializers(source.contents, source.sourcefile),
            sourcefile: source.sourcefile,
            resolveDir: root,
            loader: 'ts' as const,
          },
        }),
    absWorkingDir: root,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outdir: 'iam-actions-analysis',
    write: false,
    metafile: true,
    treeShaking: true,
    charset: 'utf8',
    legalComments: 'none',
    logLevel: 'silent',
    plugins: [pureModuleInitializers(root)],
  });
  const output = result.outputFiles.find((f) => f.path.endsWith('.js'));
  if (!output) throw new Error('esbuild produced no JavaScript');
  return readBundle(output.text, result.metafile);
}

/** The esbuild plugin that applies wrapModuleInitializers to the repository's TypeScript. */
function pureModuleInitializers(root: string): Plugin {
  return {
    name: 'pure-module-initializers',
    setup(b) {
      b.onLoad({ filter: /\.(c|m)?ts$/ }, (args) => {
        const rel = relative(root, args.path);
        if (rel.startsWith('..') || isAbsolute(rel) || rel.split(/[\\/]/).includes('node_modules')) return undefined;
        return { contents: wrapModuleInitializers(readFileSync(args.path, 'utf8'), args.path), loader: 'ts' };
      });
    },
  };
}

/**
 * Marks the module-level `const`/`let` initializers that make calls as pure (removable when unused):
 * `/* @__PURE__ *\/ (() => (<init>))()`. Left as they are: initializers that pass a function, await,
 * or call `.send(` outside a nested function.
 */
export function wrapModuleInitializers(text: string, fileName: string): string {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const spans: Array<[number, number]> = [];
  for (const statement of sf.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      const init = declaration.initializer;
      if (init && shouldWrap(init)) spans.push([init.getStart(sf), init.getEnd()]);
    }
  }
  let out = text;
  for (const [start, end] of spans.sort((a, b) => b[0] - a[0])) {
    out = `${out.slice(0, start)}/* @__PURE__ */ (() => (${out.slice(start, end)}))()${out.slice(end)}`;
  }
  return out;
}

function shouldWrap(init: ts.Expression): boolean {
  let calls = false;
  let keep = false;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) || ts.isClassLike(node) || ts.isAwaitExpression(node)) {
      keep = true;
      return;
    }
    if (ts.isCallExpression(node) || ts.isNewExpression(node) || ts.isTaggedTemplateExpression(node)) {
      calls = true;
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'send') keep = true;
    }
    ts.forEachChild(node, visit);
  };
  visit(init);
  return calls && !keep;
}

interface Binding {
  module: string;
  /** The imported name; undefined for a namespace or default import (members are read off it). */
  imported?: string;
}

/** Reads an esbuild ESM bundle (packages external) with its metafile. */
export function readBundle(text: string, metafile: Metafile): HandlerCode {
  const files = Object.keys(metafile.inputs).sort();
  const fileAt = sectionIndex(text, new Set(files));
  const sf = ts.createSourceFile('bundle.js', text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const code: HandlerCode = { files, sdk: [], packages: [], globals: [], awsHosts: [], dynamicLoads: [] };

  const bindings = new Map<string, Binding>();
  for (const statement of sf.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const module = statement.moduleSpecifier.text;
      const clause = statement.importClause;
      if (!clause) code.packages.push({ file: fileAt(statement.getStart(sf)), text: module });
      if (clause?.name) bindings.set(clause.name.text, { module });
      const named = clause?.namedBindings;
      if (named && ts.isNamespaceImport(named)) bindings.set(named.name.text, { module });
      if (named && ts.isNamedImports(named))
        for (const el of named.elements) bindings.set(el.name.text, { module, imported: (el.propertyName ?? el.name).text });
    }
    if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      code.packages.push({ file: fileAt(statement.getStart(sf)), text: statement.moduleSpecifier.text });
    }
  }

  const memberNames = new Set<string>();
  const pendingMethods: Array<{ use: SdkUse; method: string }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) return;
    if (ts.isPropertyAccessExpression(node)) memberNames.add(node.name.text);
    if (ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression)) memberNames.add(node.argumentExpression.text);
    if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
      const key = node.propertyName ?? node.name;
      if (ts.isIdentifier(key) || ts.isStringLiteralLike(key)) memberNames.add(key.text);
    }
    if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      if (AWS_HOST.test(node.text)) code.awsHosts.push({ file: fileAt(node.getStart(sf)), text: node.text });
    }
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && /^(__)?require$/.test(callee.text))) {
        code.dynamicLoads.push({ file: fileAt(node.getStart(sf)), text: node.getText(sf).slice(0, 120) });
      }
    }
    if (ts.isIdentifier(node) && isReference(node)) {
      const file = fileAt(node.getStart(sf));
      if (NETWORK_GLOBALS.has(node.text) && !bindings.has(node.text)) code.globals.push({ file, text: node.text });
      const binding = bindings.get(node.text);
      if (binding) {
        let name = binding.imported;
        let use: ts.Expression = node;
        if (name === undefined) {
          const parent = node.parent;
          if (ts.isPropertyAccessExpression(parent) && parent.expression === node) [name, use] = [parent.name.text, parent];
          else if (ts.isElementAccessExpression(parent) && parent.expression === node && ts.isStringLiteralLike(parent.argumentExpression)) {
            [name, use] = [parent.argumentExpression.text, parent];
          } else name = '*';
        }
        code.packages.push({ file, text: binding.module });
        if (binding.module.startsWith('@aws-sdk/')) {
          const sdkUse: SdkUse = { module: binding.module, name, file, constructed: ts.isNewExpression(use.parent) && use.parent.expression === use };
          const method = enclosingObjectMethod(use);
          if (method !== undefined) pendingMethods.push({ use: sdkUse, method });
          code.sdk.push(sdkUse);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  for (const { use, method } of pendingMethods) use.method = { name: method, used: memberNames.has(method) };
  code.packages = uniqueFacts(code.packages);
  return code;
}

/** An identifier read as a value (not a declared name, a member name after `.`, a key or a label). */
function isReference(node: ts.Identifier): boolean {
  const parent = node.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.name === node) return false;
  if (
    (ts.isPropertyAssignment(parent) ||
      ts.isMethodDeclaration(parent) ||
      ts.isPropertyDeclaration(parent) ||
      ts.isGetAccessor(parent) ||
      ts.isSetAccessor(parent)) &&
    parent.name === node
  ) {
    return false;
  }
  if (ts.isBindingElement(parent) && parent.propertyName === node) return false;
  if ((ts.isLabeledStatement(parent) || ts.isBreakOrContinueStatement(parent)) && parent.label === node) return false;
  if (ts.isImportSpecifier(parent) || ts.isImportClause(parent) || ts.isNamespaceImport(parent) || ts.isExportSpecifier(parent)) return false;
  if (ts.isDeclarationStatement(parent) && (parent as ts.DeclarationStatement).name === node) return false;
  if (
    (ts.isVariableDeclaration(parent) ||
      ts.isParameter(parent) ||
      ts.isBindingElement(parent) ||
      ts.isFunctionExpression(parent) ||
      ts.isClassExpression(parent)) &&
    parent.name === node
  ) {
    return false;
  }
  return true;
}

/** The name of the nearest object-literal method (or function-valued property) around a node. */
function enclosingObjectMethod(node: ts.Node): string | undefined {
  for (let n: ts.Node | undefined = node.parent; n; n = n.parent) {
    const host = ts.isMethodDeclaration(n)
      ? n
      : (ts.isFunctionExpression(n) || ts.isArrowFunction(n)) && ts.isPropertyAssignment(n.parent)
        ? n.parent
        : undefined;
    if (host && ts.isObjectLiteralExpression(host.parent) && (ts.isIdentifier(host.name) || ts.isStringLiteralLike(host.name))) return host.name.text;
  }
  return undefined;
}

/**
 * esbuild starts each module's code with a `// <path>` line (the metafile's input key); maps an
 * offset in the bundle to the module it came from.
 */
function sectionIndex(text: string, files: Set<string>): (offset: number) => string {
  const starts: Array<[number, string]> = [];
  for (const match of text.matchAll(/^\/\/ (.+)$/gm)) if (files.has(match[1]!)) starts.push([match.index, match[1]!]);
  return (offset) => {
    let file = '(bundle)';
    for (const [start, name] of starts) {
      if (start > offset) break;
      file = name;
    }
    return file;
  };
}

function uniqueFacts(facts: CodeFact[]): CodeFact[] {
  const seen = new Map<string, CodeFact>();
  for (const fact of facts) seen.set(`${fact.file}\0${fact.text}`, fact);
  return [...seen.values()];
}
