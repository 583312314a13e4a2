package sealbox

// noFollow is 0 on Windows: os.OpenFile has no flag that refuses a link there.
const noFollow = 0
