-- A headless Neovim session with isalint server, for tests/test_server_nvim.py.
-- Opens the file given on the command line, starts the server the way a user's configuration does
-- (vim.lsp.start on Neovim 0.8+, vim.lsp.start_client + buf_attach_client on 0.7), waits for the
-- diagnostics, hovers on the first v_dual_fmac_f32, applies the "suppress DELAY001 on this line"
-- action and waits for the diagnostics of the edited buffer. Everything it sees is written, one
-- line per fact, to the file $ISALINT_NVIM_OUT.
local out = assert(io.open(os.getenv('ISALINT_NVIM_OUT'), 'w'))
local function say(...)
  out:write(table.concat({ ... }, '\t'), '\n')
  out:flush()
end

local ok, err = pcall(function()
  local buf = vim.api.nvim_get_current_buf()
  local config = {
    name = 'isalint',
    cmd = { os.getenv('ISALINT_PYTHON'), '-m', 'isalint', 'server' },
    root_dir = vim.fn.getcwd(),
  }
  local client_id
  if vim.lsp.start then
    client_id = vim.lsp.start(config)
  else
    client_id = vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(buf, client_id)
  end
  say('CLIENT', tostring(client_id))

  local function main_diagnostics()
    local found = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.severity ~= vim.diagnostic.severity.HINT then
        table.insert(found, d)
      end
    end
    table.sort(found, function(a, b) return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col) end)
    return found
  end
  local function code_of(d)
    return d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or ''
  end

  say('WAITED', tostring(vim.wait(120000, function() return #main_diagnostics() > 0 end, 50)))
  for _, d in ipairs(main_diagnostics()) do
    say('DIAG', d.lnum + 1, d.col + 1, d.severity, code_of(d), (d.message:gsub('\n.*', '')))
  end

  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  for n, text in ipairs(lines) do
    if text:match('^%s*v_dual_fmac_f32') then
      local params = { textDocument = { uri = vim.uri_from_bufnr(buf) },
                       position = { line = n - 1, character = text:find('v_dual') + 1 } }
      for _, reply in pairs(vim.lsp.buf_request_sync(buf, 'textDocument/hover', params, 30000) or {}) do
        if reply.result then
          say('HOVER', (reply.result.contents.value:gsub('\n', ' ')))
        end
      end
      break
    end
  end

  local target
  for _, d in ipairs(main_diagnostics()) do
    if code_of(d) == 'DELAY001' then target = d end
  end
  if target then
    local params = { textDocument = { uri = vim.uri_from_bufnr(buf) },
                     range = { start = { line = target.lnum, character = 0 },
                               ['end'] = { line = target.lnum, character = 0 } },
                     context = { diagnostics = {} } }
    for _, reply in pairs(vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', params, 30000) or {}) do
      for _, action in ipairs(reply.result or {}) do
        say('ACTION', action.title)
        if action.title:find('^Suppress DELAY001 on this line') and action.edit then
          vim.lsp.util.apply_workspace_edit(action.edit, 'utf-16')
        end
      end
    end
    say('EDITED', vim.trim(vim.api.nvim_buf_get_lines(buf, target.lnum, target.lnum + 1, false)[1]))
    say('WAITED', tostring(vim.wait(120000, function()
      for _, d in ipairs(main_diagnostics()) do
        if code_of(d) == 'DELAY001' then return false end
      end
      return true
    end, 50)))
    for _, d in ipairs(main_diagnostics()) do
      say('AFTER', d.lnum + 1, d.col + 1, d.severity, code_of(d))
    end
  end

  vim.lsp.stop_client(client_id)
  say('STOPPED', tostring(vim.wait(30000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 50)))
end)
if not ok then say('ERROR', tostring(err)) end
out:close()
vim.cmd('qall!')
