-- The parts of wrk's `wrk` table that are Lua: the request format and what happens after init.
-- Written for webstand from wrk's documented behaviour; the fields (scheme, host, port, method,
-- path, headers, body) and wrk.lookup/wrk.connect are set from Rust before the script runs.

-- One HTTP/1.1 request: the request line, each header, Content-Length when there is a body, the
-- blank line and the body. Arguments left out are wrk's defaults.
function wrk.format(method, path, headers, body)
   method = method or wrk.method
   path = path or wrk.path
   headers = headers or wrk.headers
   body = body or wrk.body
   local out = { method .. " " .. path .. " HTTP/1.1" }
   if headers["Host"] == nil and wrk.headers["Host"] ~= nil then
      out[#out + 1] = "Host: " .. wrk.headers["Host"]
   end
   for name, value in pairs(headers) do
      if name ~= "Content-Length" then
         out[#out + 1] = name .. ": " .. tostring(value)
      end
   end
   if body then
      out[#out + 1] = "Content-Length: " .. #body
   end
   out[#out + 1] = ""
   out[#out + 1] = body or ""
   return table.concat(out, "\r\n")
end

-- After the script's init(args): the request built once from the table's fields, returned by
-- wrk.request() (a script's own request() may call it).
function wrk.ready()
   local built = wrk.format()
   wrk.request = function() return built end
   return built
end
