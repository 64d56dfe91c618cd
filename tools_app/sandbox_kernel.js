// The JavaScript interpreter that runs inside a sandbox: sandbox_kernel.py's JSON-lines REPL, for Node.js.
//
// Not loaded by Cognizes: the sandbox daemon runs its source with the sandbox's Node (`node -e <source> <workspace>
// <scratch> <answers fd>`) inside bubblewrap, so it uses Node's built-in modules only. Each request line is {"code", "files":
// [{"name", "data": base64}]}; each answer line is {"stdout", "stderr", "error", "files": [{"name", "data"}]}, as the
// Python kernel's. The code runs as a vm.Script in one context kept for the interpreter's life, so its functions,
// `var`s and top-level `let`/`const`/`class` stay for the next execution (a script's lexical bindings live in its
// context). Code with a top-level `await` runs inside an async function instead, whose own `let`/`const` end with
// it. Descriptors 1 and 2 are files in the sandbox's /tmp (opened by the daemon, appended to, emptied before each
// execution), so what console, process.stdout and a child process print is captured alike; the answers go to a
// pipe whose descriptor the daemon passes as the third argument.
'use strict'

const fs = require('fs')
const path = require('path')
const vm = require('vm')
const util = require('util')
const readline = require('readline')
const { createRequire } = require('module')
const childProcess = require('child_process')

const OUTPUT_CAP = 1 << 20 // bytes of stdout and of stderr kept per execution
const FILES_CAP = 100 << 20 // bytes of output files per answer: Vertex's 100 MB per response
const WORKSPACE = process.argv[1] || '/workspace'
const SCRATCH = process.argv[2] || '/tmp'
const ANSWERS = Number(process.argv[3] || 1) // the daemon's pipe; fds 1 and 2 are the capture files in SCRATCH
const writeAnswer = fs.writeSync.bind(fs)

/** Whether the current execution failed (an error thrown, or one from a callback it left behind). */
const capture = { failed: false }
const OUTPUTS = { stdout: path.join(SCRATCH, '.stdout'), stderr: path.join(SCRATCH, '.stderr') }

const KERNEL_FRAME = /^\s+at .*(\[eval\]|node:vm|node:internal)/

function report (error) {
  capture.failed = true
  const stack = error && typeof error.stack === 'string' ? error.stack : `Uncaught ${util.inspect(error)}`
  process.stderr.write(stack.split('\n').filter((line) => !KERNEL_FRAME.test(line)).join('\n') + '\n')
}
process.on('uncaughtException', report) // from a callback the code left behind: said in the current answer
process.on('unhandledRejection', report)

const globals = {
  console,
  process,
  Buffer,
  URL,
  URLSearchParams,
  TextEncoder,
  TextDecoder,
  AbortController,
  structuredClone,
  atob,
  btoa,
  fetch: globalThis.fetch,
  setTimeout,
  clearTimeout,
  setInterval,
  clearInterval,
  setImmediate,
  clearImmediate,
  queueMicrotask,
  require: createRequire(path.join(WORKSPACE, 'index.js')),
  __dirname: WORKSPACE,
  __filename: path.join(WORKSPACE, 'index.js')
}
globals.globalThis = globals
globals.global = globals
const context = vm.createContext(globals)

/** The code as a script of the context (its lexical bindings kept), or in an async function if it awaits. */
function compile (code) {
  try {
    return new vm.Script(code, { filename: '<code>' })
  } catch (error) {
    if (!(error instanceof SyntaxError) || !/\bawait\b/.test(code)) throw error
    return new vm.Script(`(async () => {\n${code}\n})()`, { filename: '<code>', lineOffset: -1 })
  }
}

function files () {
  const found = new Map()
  const walk = (folder) => {
    let names
    try { names = fs.readdirSync(folder) } catch { return }
    for (const name of names) {
      const full = path.join(folder, name)
      let stat
      try { stat = fs.lstatSync(full, { bigint: true }) } catch { continue }
      if (stat.isDirectory()) walk(full)
      else if (stat.isFile()) found.set(full, `${stat.mtimeNs}:${stat.size}:${stat.ino}`)
    }
  }
  walk(WORKSPACE)
  return found
}

function changed (before) {
  const list = []
  let budget = FILES_CAP
  for (const [full, signature] of [...files()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (before.get(full) === signature) continue
    let data
    try {
      const fd = fs.openSync(full, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
      try { data = fs.readFileSync(fd) } finally { fs.closeSync(fd) }
    } catch { continue }
    if (data.length > budget) continue
    budget -= data.length
    list.push({ name: path.relative(WORKSPACE, full), data: data.toString('base64') })
  }
  return list
}

function text (kind) {
  const data = Buffer.alloc(OUTPUT_CAP + 1)
  let size = 0
  try {
    const fd = fs.openSync(OUTPUTS[kind], fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
    try { size = fs.readSync(fd, data, 0, data.length, 0) } finally { fs.closeSync(fd) }
  } catch { return '' }
  const cut = size > OUTPUT_CAP
  return data.subarray(0, Math.min(size, OUTPUT_CAP)).toString('utf8') + (cut ? '\n[output cut at 1 MiB]\n' : '')
}

async function run (request) {
  for (const item of request.files || []) {
    const target = path.join(WORKSPACE, path.normalize('/' + item.name).replace(/^\/+/, ''))
    try {
      fs.mkdirSync(path.dirname(target), { recursive: true })
      fs.writeFileSync(target, Buffer.from(item.data, 'base64'))
    } catch (error) {
      return { stdout: '', stderr: `input file '${item.name}' not written: ${error.message}\n`, error: true, files: [] }
    }
  }
  const before = files()
  for (const fd of [1, 2]) try { fs.ftruncateSync(fd, 0) } catch {} // appended to, so written from the start
  capture.failed = false
  try {
    const result = compile(request.code || '').runInContext(context)
    if (result && typeof result.then === 'function') await result
  } catch (error) {
    report(error)
  }
  await new Promise((resolve) => setImmediate(resolve)) // what the code's last callbacks print is its own
  try { process.chdir(WORKSPACE) } catch {}
  return { stdout: text('stdout'), stderr: text('stderr'), error: capture.failed, files: changed(before) }
}

function bash (request) {
  const started = Date.now()
  const done = childProcess.spawnSync('/bin/bash', ['-c', request.command], {
    cwd: path.join(WORKSPACE, request.cwd || '.'),
    timeout: request.command_timeout ? request.command_timeout * 1000 : undefined,
    maxBuffer: OUTPUT_CAP,
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const timedOut = done.error && done.error.code === 'ETIMEDOUT'
  const code = done.status === null ? (timedOut ? -9 : 127) : done.status
  const answer = {
    stdout: (done.stdout || '').toString('utf8'),
    stderr: (done.stderr || '').toString('utf8') + (timedOut ? '\n[timed out]\n' : (done.error && !timedOut ? String(done.error) : '')),
    returncode: code,
    duration_ms: Date.now() - started
  }
  return { stdout: JSON.stringify(answer), stderr: '', error: code !== 0, files: [] }
}

async function answer (request) {
  if (request.snapshot) {
    const message = 'snapshots of JavaScript sandboxes are not offered: their variables do not serialize\n'
    return { stdout: '', stderr: message, error: true, files: [] }
  }
  if ('command' in request) return bash(request)
  return run(request)
}

async function main () {
  process.chdir(WORKSPACE)
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of lines) {
    if (!line.trim()) continue
    const reply = Buffer.from(JSON.stringify(await answer(JSON.parse(line))) + '\n')
    let offset = 0
    while (offset < reply.length) offset += writeAnswer(ANSWERS, reply, offset, reply.length - offset)
  }
  process.exit(0)
}

main()
