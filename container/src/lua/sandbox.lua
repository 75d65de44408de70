-- Lua sandbox for lualatex jobs. Loaded by the bootstrap line after the format
-- (and luaotfload) are initialised and before the user's main.tex is read.
-- LuaTeX with shell escape off already disables io.popen/os.execute, but io.open
-- and friends ignore openin_any/openout_any. This file restricts every Lua entry
-- point that opens, lists or creates files:
--   read:  relative paths (no ..) in the job directory, plus the TeX and font trees
--   write: relative paths (no ..) in the job directory only
-- and removes what could load native code or reach the originals (debug, C loaders,
-- binary chunks).
local jobdir = assert(TEXPOOL_JOBDIR, "sandbox: job dir not set")
TEXPOOL_JOBDIR = nil
-- a shell-escape job (only ever inside bubblewrap, which contains the programs): keep
-- os.execute and io.popen, through which LuaTeX runs \write18
local shell = TEXPOOL_SHELL == true
TEXPOOL_SHELL = nil

local type, tostring, error, pcall, select = type, tostring, error, pcall, select
local sfind, ssub, sgsub = string.find, string.sub, string.gsub

local read_roots = {
  jobdir .. "/",
  "/usr/share/texlive/", "/usr/share/texmf/", "/usr/share/fonts/", "/usr/local/share/fonts/",
  "/usr/share/texmf-dist/", "/var/lib/texmf/", "/etc/texmf/", "/etc/fonts/", "/var/cache/fontconfig/",
  "/usr/share/fontconfig/",
}

local function normalise(p)
  if type(p) ~= "string" or p == "" or sfind(p, "\0", 1, true) then return nil end
  if ssub(p, 1, 1) ~= "/" then p = jobdir .. "/" .. p end
  p = sgsub(p, "/+", "/")
  p = sgsub(p, "/%./", "/")
  p = sgsub(p, "/%.$", "/")
  -- no parent references at all
  if sfind(p, "/%.%./") or sfind(p, "/%.%.$") then return nil end
  return p
end

local function under(p, roots)
  for i = 1, #roots do
    local r = roots[i]
    if ssub(p, 1, #r) == r or p .. "/" == r then return true end
  end
  return false
end

local function can_read(p)
  local n = normalise(p)
  return n ~= nil and under(n, read_roots)
end
local function can_write(p)
  local n = normalise(p)
  return n ~= nil and under(n, { jobdir .. "/" })
end

local function deny(what, p)
  return nil, "sandbox: " .. what .. " not allowed: " .. tostring(p)
end

-- io -------------------------------------------------------------------------
local io_open, io_lines, io_input, io_output = io.open, io.lines, io.input, io.output
io.open = function(p, mode)
  mode = mode or "r"
  local writing = sfind(mode, "[wa+]") ~= nil
  if writing then
    if not can_write(p) then return deny("write", p) end
  elseif not can_read(p) then
    return deny("read", p)
  end
  return io_open(p, mode)
end
io.lines = function(p, ...)
  if p ~= nil and not can_read(p) then error("sandbox: read not allowed: " .. tostring(p), 2) end
  return io_lines(p, ...)
end
io.input = function(p)
  if type(p) == "string" and not can_read(p) then error("sandbox: read not allowed: " .. p, 2) end
  return io_input(p)
end
io.output = function(p)
  if type(p) == "string" and not can_write(p) then error("sandbox: write not allowed: " .. p, 2) end
  return io_output(p)
end
if not shell then io.popen = nil end

-- os -------------------------------------------------------------------------
local os_remove, os_rename = os.remove, os.rename
os.remove = function(p)
  if not can_write(p) then return deny("remove", p) end
  return os_remove(p)
end
os.rename = function(a, b)
  if not can_write(a) or not can_write(b) then return deny("rename", a) end
  return os_rename(a, b)
end
os.exec, os.spawn, os.setenv, os.tmpname, os.tmpdir, os.kpsepopen = nil, nil, nil, nil, nil, nil
-- packages probe for a shell with os.execute() (imakeidx: tex.write(os.execute()));
-- answer as LuaTeX does with shell escape off: 0, no shell. Commands never run.
if not shell then
  os.execute = function(cmd)
    if cmd == nil then return 0 end
    return nil, "shell commands are disabled"
  end
end

-- lfs ------------------------------------------------------------------------
if lfs then
  -- wraps an lfs function of a path: refused (deny) unless allowed(path)
  local guarded = function(allowed, what)
    return function(f)
      if not f then return nil end
      return function(p, ...)
        if not allowed(p) then return deny(what, p) end
        return f(p, ...)
      end
    end
  end
  local wrap_read, wrap_write = guarded(can_read, "read"), guarded(can_write, "write")
  local lfs_dir = lfs.dir
  lfs.dir = function(p)
    if not can_read(p) then error("sandbox: read not allowed: " .. tostring(p), 2) end
    return lfs_dir(p)
  end
  lfs.attributes = wrap_read(lfs.attributes)
  lfs.symlinkattributes = wrap_read(lfs.symlinkattributes)
  lfs.isdir = wrap_read(lfs.isdir)
  lfs.isfile = wrap_read(lfs.isfile)
  lfs.readlink = wrap_read(lfs.readlink)
  lfs.mkdir = wrap_write(lfs.mkdir)
  lfs.mkdirp = wrap_write(lfs.mkdirp)
  lfs.rmdir = wrap_write(lfs.rmdir)
  lfs.touch = wrap_write(lfs.touch)
  lfs.chdir, lfs.link, lfs.lock_dir, lfs.setmode = nil, nil, nil, nil
end

-- code loading -----------------------------------------------------------------
local lua_load, lua_loadfile, lua_dofile = load, loadfile, dofile
load = function(chunk, name, mode, env)
  return lua_load(chunk, name, "t", env)
end
loadfile = function(p, mode, env)
  if p == nil or not can_read(p) then return deny("read", p) end
  return lua_loadfile(p, "t", env)
end
dofile = function(p)
  if p == nil or not can_read(p) then error("sandbox: read not allowed: " .. tostring(p), 2) end
  local f = assert(lua_loadfile(p, "t"))
  return f()
end
package.loadlib = nil
package.cpath = ""
do
  -- keep only the preload searcher and the Lua-source searcher (luatex's kpse
  -- based one), wrapped so the file it found is checked; the C searchers go.
  local searchers = package.searchers
  local preload, lua_searcher = searchers[1], searchers[2]
  for i = #searchers, 1, -1 do searchers[i] = nil end
  searchers[1] = preload
  searchers[2] = function(name)
    local loader, where = lua_searcher(name)
    if type(loader) == "function" and type(where) == "string" and not can_read(where) then
      return "\n\tsandbox: not allowed: " .. where
    end
    return loader, where
  end
end

-- engine-specific file openers -----------------------------------------------
if fontloader then
  for _, k in ipairs({ "open", "info" }) do
    local f = fontloader[k]
    if f then fontloader[k] = function(p, ...) if not can_read(p) then return deny("read", p) end return f(p, ...) end end
  end
end
if pdfe and pdfe.open then
  local f = pdfe.open
  pdfe.open = function(p, ...) if not can_read(p) then return deny("read", p) end return f(p, ...) end
end
if mplib and mplib.new then
  local new = mplib.new
  mplib.new = function(args)
    if type(args) == "table" and type(args.find_file) == "function" then
      local ff = args.find_file
      args.find_file = function(name, mode, ftype)
        local r = ff(name, mode, ftype)
        if type(r) ~= "string" then return r end
        if mode == "w" then return can_write(r) and r or nil end
        return can_read(r) and r or nil
      end
    end
    return new(args)
  end
end
if luatexbase and luatexbase.add_to_callback then
  local add = luatexbase.add_to_callback
  luatexbase.add_to_callback = function(name, fn, desc, ...)
    if type(name) == "string" and type(fn) == "function" and sfind(name, "^find_.*_file$") then
      local inner = fn
      local writing = sfind(name, "^find_write_file$") or name == "find_output_file"
      fn = function(...)
        local r = inner(...)
        if type(r) == "string" and not (writing and can_write(r) or (not writing) and can_read(r)) then return nil end
        return r
      end
    end
    return add(name, fn, desc, ...)
  end
end

-- project fonts by family name: luaotfload's name database was built without them, so its name
-- lookups answer the project's families first (TEXPOOL_FONTS, one "family<TAB>style<TAB>path"
-- line per font, made by the server from the fonts' name tables; paths relative to the job)
do
  local list = os.getenv("TEXPOOL_FONTS")
  local names = fonts and fonts.names
  if list and names then
    local lower = string.lower
    local function key(s) return (sgsub(lower(s), "[%s%-_]", "")) end
    -- luaotfload's style codes (fontspec's /B, /I, /BI) and the fonts' own style names
    local styles = { [""] = "regular", r = "regular", normal = "regular", book = "regular", roman = "regular",
      b = "bold", i = "italic", oblique = "italic", bi = "bolditalic", ib = "bolditalic", boldoblique = "bolditalic" }
    local function stylekey(s)
      s = key(s or "")
      return styles[s] or s
    end
    local byname, family = {}, {}
    for fam, style, rel in string.gmatch(list, "([^\t\n]+)\t([^\t\n]*)\t([^\t\n]+)\n") do
      local st = stylekey(style)
      local k = key(fam) .. "/" .. st
      if byname[k] == nil and can_read(rel) then
        byname[k] = jobdir .. "/" .. rel
        -- a style the family lacks falls back to its regular face (else any), as luaotfload does
        if family[key(fam)] == nil or st == "regular" then family[key(fam)] = byname[k] end
      end
    end
    local function wrap(inner)
      if type(inner) ~= "function" then return inner end
      return function(spec, ...)
        if type(spec) ~= "table" or type(spec.name) ~= "string" then return inner(spec, ...) end
        local k = key(spec.name)
        local p = byname[k .. "/" .. stylekey(spec.style)] or family[k]
        if p then return p, false end
        return inner(spec, ...)
      end
    end
    names.lookup_font_name = wrap(names.lookup_font_name)
    names.lookup_font_name_cached = wrap(names.lookup_font_name_cached)
  end
end

-- debug: keep only traceback (luatexbase and luaotfload use it in messages)
do
  local tb = debug.traceback
  debug = { traceback = tb }
  package.loaded.debug = debug
end
