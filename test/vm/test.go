package vm

// Test is a test binary to run in the machine.
type Test struct {
	// Name names it in the output; unique.
	Name string `json:"name"`
	// Binary is the test binary on the host; it is run in the machine from /tests/<Name>.
	Binary string `json:"-"`
	// Args are its arguments (-test.run, -test.v, ...).
	Args []string `json:"args"`
}

// Marker starts the lines init writes about the run, one per event, on the serial console:
//
//	vk-static-vm: start NAME
//	vk-static-vm: exit NAME CODE
//	vk-static-vm: done
//
// and, for what init itself could not do, "vk-static-vm: error MESSAGE".
const Marker = "vk-static-vm:"

// TestsFile is where init finds the tests to run, as JSON ([]Test), in the initramfs.
const TestsFile = "/tests/tests.json"

// BinaryPath is where a test's binary is in the machine.
func BinaryPath(name string) string {
	return "/tests/" + name
}
