// Package doccheck holds tests of the documentation, and no code.
//
// Numbers in one place: every measured figure that README.md or
// docs/design.md quotes is listed with the text of its record in
// docs/E2E.md or docs/demo.md, which must still hold it, or listed as a
// constant of the code or of other software, which no run changes; figures
// of docs/BENCHMARKS.md, rewritten by every make bench, are linked, never
// quoted.
//
// Contracts in godoc: no exported doc comment of a public package (what
// pkg.go.dev and go doc -all show) sends the reader to a file of the
// repository; the contract is stated in the identifier it governs.
//
// The README's first screen keeps what an adopter needs first, and every
// link of the README and docs/ to a file of the repository, or to one of its
// headings, resolves.
package doccheck
