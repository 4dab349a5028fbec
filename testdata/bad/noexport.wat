;; bad: exports only memory and cmdhost_abi_version, no cmdhost_describe or cmdhost_handle, so loading must fail.
(module
  (memory (export "memory") 1)

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))
)
