-- The loaders a script can call take Lua source only, never LuaJIT bytecode: LuaJIT does not
-- check bytecode, and a crafted chunk crashes the process (as the script file itself is loaded).
local load, loadfile = load, loadfile
_G.load = function(chunk, name, _, env)
  return load(chunk, name, "t", env)
end
_G.loadstring = function(s, name)
  return load(s, name, "t")
end
_G.loadfile = function(file, _, env)
  return loadfile(file, "t", env)
end
_G.dofile = function(file)
  local f = assert(loadfile(file, "t"))
  return f()
end
