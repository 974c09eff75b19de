// Package doccheck keeps the figures that README.md and docs/design.md quote in
// step with the documents that record them (docs/E2E.md, docs/demo.md,
// docs/BENCHMARKS.md). It has no code, only its test: every measured figure in
// those two files is either listed with the text of its record, which must
// still contain it, or listed as a constant of the code or of someone else's
// software, which no run can change.
package doccheck
