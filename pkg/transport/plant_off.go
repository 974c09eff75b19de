//go:build !teebody_plant

package transport

// plant is the defect planted in this build: none (plant.go).
const plant = ""
