-- nvim-dap (https://github.com/mfussenegger/nvim-dap): ndbg's neural debugger for Python files.
-- Put in your config (e.g. ~/.config/nvim/after/plugin/ndbg.lua); `ndbg` must be on PATH.
local dap = require('dap')

dap.adapters.ndbg = { type = 'executable', command = 'ndbg', args = { 'dap' } }
-- Or over TCP, with `ndbg dap --port 4711` running:
-- dap.adapters.ndbg = { type = 'server', host = '127.0.0.1', port = 4711 }

dap.configurations.python = dap.configurations.python or {}
table.insert(dap.configurations.python, {
  type = 'ndbg',
  request = 'launch',
  name = 'ndbg: oracle (exact)',
  program = '${file}',
  call = function() return vim.fn.input('entry call: ', "count('berry', 'r')") end,
})
table.insert(dap.configurations.python, {
  type = 'ndbg',
  request = 'launch',
  name = 'ndbg: model, verified',
  program = '${file}',
  call = function() return vim.fn.input('entry call: ') end,
  checkpoint = function() return vim.fn.input('checkpoint: ', 'runs/quick/checkpoints/step-004000', 'dir') end,
  verify = true,
})
