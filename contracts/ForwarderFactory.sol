// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Forwarder} from "./Forwarder.sol";

/// @title ForwarderFactory
/// @notice Deploys and sweeps checkout-session deposit addresses. A session's address is the
/// CREATE2 address of an EIP-1167 clone of `implementation` with
///     salt = keccak256(abi.encode(merchant, sessionSalt)),
/// computed here from the merchant, so an address derived for merchant M can only ever be
/// deployed bound to M: the clone is initialized with M in the same transaction. Addresses are
/// known (and can receive funds) before anything is deployed.
///
/// Tron: one source for both chains, set at deployment. `create2Prefix` is 0xff on the EVM and
/// 0x41 on the TVM; `checksBalanceChange` makes the forwarder check its balance rather than a
/// token's return value. Constructor parameters rather than a Tron variant: the contract cannot
/// tell which CREATE2 its chain runs, and the local Tron (an EVM node) needs the Tron forwarder
/// with 0xff, so the two choices are independent; one audited source covers every combination.
contract ForwarderFactory {
    /// @notice One forwarder to sweep: deploy it if needed, then flush the native coin (when
    /// `native`) and each of `tokens` to its merchant.
    struct FlushRequest {
        address merchant;
        bytes32 sessionSalt;
        address[] tokens;
        bool native;
    }

    /// @notice The Forwarder every clone delegates to, deployed by this factory's constructor
    /// (on the EVM the CREATE address of this factory with nonce 1; on the TVM, CREATE derives
    /// from the transaction id, so read it from here).
    address public immutable implementation;

    /// @notice keccak256 of the 55-byte EIP-1167 creation code of a clone of `implementation`.
    bytes32 public immutable forwarderInitCodeHash;

    /// @notice The first byte of the CREATE2 preimage this chain hashes: 0xff on the EVM
    /// (EIP-1014), 0x41 on the TVM (TIP-26). A wrong one makes every `deploy` revert DeployFailed.
    bytes1 public immutable create2Prefix;

    event ForwarderDeployed(address indexed forwarder, address indexed merchant, bytes32 indexed sessionSalt);

    error ZeroMerchant();
    error DeployFailed(address merchant, bytes32 sessionSalt);
    error UnknownCreate2Prefix(bytes1 prefix);

    constructor(bytes1 create2Prefix_, bool checksBalanceChange) {
        if (create2Prefix_ != 0xff && create2Prefix_ != 0x41) revert UnknownCreate2Prefix(create2Prefix_);
        create2Prefix = create2Prefix_;
        address impl = address(new Forwarder(checksBalanceChange));
        implementation = impl;
        forwarderInitCodeHash = keccak256(_cloneCode(impl));
    }

    /// @notice The CREATE2 salt for (merchant, sessionSalt): keccak256(abi.encode(merchant, sessionSalt)).
    function saltFor(address merchant, bytes32 sessionSalt) public pure returns (bytes32) {
        return keccak256(abi.encode(merchant, sessionSalt));
    }

    /// @notice The deposit address of (merchant, sessionSalt), deployed or not.
    function predictAddress(address merchant, bytes32 sessionSalt) public view returns (address) {
        bytes32 digest = keccak256(
            abi.encodePacked(create2Prefix, address(this), saltFor(merchant, sessionSalt), forwarderInitCodeHash)
        );
        return address(uint160(uint256(digest)));
    }

    /// @notice Deploys the forwarder of (merchant, sessionSalt), bound to `merchant`, unless it
    /// already exists; returns its address either way.
    function deploy(address merchant, bytes32 sessionSalt) public returns (address forwarder) {
        if (merchant == address(0)) revert ZeroMerchant();
        forwarder = predictAddress(merchant, sessionSalt);
        if (forwarder.code.length != 0) return forwarder;
        bytes memory code = _cloneCode(implementation);
        bytes32 salt = saltFor(merchant, sessionSalt);
        address deployed;
        assembly ("memory-safe") {
            deployed := create2(0, add(code, 0x20), mload(code), salt)
        }
        if (deployed == address(0) || deployed != forwarder) revert DeployFailed(merchant, sessionSalt);
        Forwarder(payable(deployed)).initialize(merchant);
        emit ForwarderDeployed(deployed, merchant, sessionSalt);
    }

    /// @notice Sweeps many forwarders in one transaction: each is deployed if needed, then
    /// flushed to its own merchant. Anyone may call it; reverts as a whole if any transfer fails.
    function flush(FlushRequest[] calldata requests) external {
        for (uint256 i = 0; i < requests.length; ++i) {
            FlushRequest calldata request = requests[i];
            Forwarder forwarder = Forwarder(payable(deploy(request.merchant, request.sessionSalt)));
            if (request.native) forwarder.flushNative();
            if (request.tokens.length != 0) forwarder.flushTokens(request.tokens);
        }
    }

    /// @dev EIP-1167 minimal proxy creation code for `impl` (55 bytes).
    function _cloneCode(address impl) private pure returns (bytes memory) {
        return abi.encodePacked(
            hex"3d602d80600a3d3981f3363d3d373d3d3d363d73", impl, hex"5af43d82803e903d91602b57fd5bf3"
        );
    }
}
